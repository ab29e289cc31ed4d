"""Allocation requests a dead process left unsettled.

An allocation request (``/os-allocations``) is committed ``placing``
before anything is claimed for it (``scheduler.allocation_service``). A
process killed before the row is ``placed`` leaves it ``placing`` with
a claim or none; one killed while giving a request up or deleting it
leaves it ``settling`` or ``deleting``. The super conductor's sweep
takes rows that are not placed and older than ``GRACE`` seconds (a
placement under way takes well under that), marks a ``placing`` one
``settling`` -- from then the placing process, if alive after all,
cannot mark it placed and releases what it claimed -- releases every
claim of its consumer (pool shares and the host's, the API-level
scheduler's ``release_resources``), and deletes the row. Idempotent,
and safe with several conductors sweeping at once.
"""

from oslo_log import log as logging

from cellboot.scheduler import allocation_records as rows
from cellboot.scheduler import allocation_service

LOG = logging.getLogger(__name__)

# Rows looked at per sweep.
PER_SWEEP = 500
# Seconds a row must be unsettled before it is taken for abandoned.
GRACE = 120


class UnplacedAllocations:
    """The check; ``manager`` is a super conductor's (``scheduler``)."""

    def __init__(self, manager, grace=GRACE):
        self.manager = manager
        self.grace = grace

    def sweep_once(self, context):
        """``{'settled': rows released and deleted}``."""
        settled = 0
        for uuid, status in rows.unsettled(context, self.grace, PER_SWEEP):
            try:
                if status == rows.PLACING and not rows.mark(
                        context, uuid, rows.SETTLING,
                        only_from=rows.PLACING):
                    continue  # placed (or settled) meanwhile
                LOG.info('Allocation request %s was left %s; releasing '
                         'what it holds and deleting it', uuid, status)
                allocation_service.settle(context, self.manager.scheduler,
                                          uuid)
                settled += 1
            except Exception as exc:
                LOG.warning('Could not settle allocation request %s yet '
                            '(%s); trying again at the next sweep', uuid,
                            exc)
        return {'settled': settled}
