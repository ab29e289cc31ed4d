"""API-level schedulers sharing the cells' aggregates through a feed.

Several super conductors each run an API-level scheduler
(``cells.CellsScheduler``) that ranks cells by their aggregates. Each
placement answer brings the cell's aggregate as of that placement; the
scheduler that got it takes it at once, but its peers would see the
cell's new figures only when they read the cells' published rows again
(``[scheduler] cell_check_interval``). So the aggregate is also put on a
feed (``[scheduler] api_sync_backend``), and the peers take it before
their next decision, when it is newer than theirs (``computed_at``):
figures never go backwards. A cell the peer does not know yet is left
to its next read of the cells.
"""

import json

from oslo_log import log as logging

from cellboot.scheduler.sync import follower

LOG = logging.getLogger(__name__)

AGGREGATE = 'aggregate'


class AggregateFollower(follower.Follower):
    """An API-level scheduler's: keeps its ``CellAggregates`` current."""

    def __init__(self, aggregates, feed, origin):
        super().__init__('API level', feed, origin)
        self.aggregates = aggregates

    def taken(self, context, cell, document):
        """A placement in ``cell`` answered with ``document``."""
        self.publish(context, [(AGGREGATE, cell.uuid, json.dumps(document))])

    def _apply(self, context, entries):
        views = self.aggregates.views()
        for entry in entries:
            if self.mine(entry) or entry.kind != AGGREGATE:
                continue
            view = views.get(entry.key)
            if view is None:
                continue
            try:
                document = json.loads(entry.value)
            except (TypeError, ValueError) as exc:
                LOG.warning('API level: ignoring an aggregate of cell %s '
                            'from the change feed that is no JSON: %s',
                            view.cell.name, exc)
                continue
            self.aggregates.take(view.cell, document, newer_only=True)

    def _reload(self, context):
        self.aggregates.refresh(context)
