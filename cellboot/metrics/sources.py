"""Figures kept by other objects, read when the metrics are scraped.

The schedulers count their decisions and failed claims for their own
logs and benchmarks (``counters()``), a flow runner knows the flows it
has in hand, the API level's scheduler knows which cells do not answer.
Counting those again beside them would give two figures that may
disagree; instead each such object registers here (``register``) and
says, when scraped, what it holds now (``samples()``). The objects are
held weakly: one that is dropped (a stopped service, a test's cluster)
stops being reported.

``samples()`` yields ``(family, labels, value)``; ``family`` is a key of
``FAMILIES``, which gives every metric read this way its type and help
once. The values of several objects with the same family and labels (two
schedulers of one cell in a test process) are added, except where a
family says otherwise (whether a cell is usable: the least of them).
"""

import threading
import weakref

from oslo_log import log as logging
from prometheus_client import core
from prometheus_client import registry

LOG = logging.getLogger(__name__)

GAUGE = 'gauge'
COUNTER = 'counter'

# family: (type, help, label names[, how values of one key combine])
FAMILIES = {
    'cellboot_flows_running': (
        GAUGE, 'Flows this process runs now (or is about to resume), by '
        'kind.', ('kind',)),
    'cellboot_scheduler_requests_placed': (
        COUNTER, 'Requests the API level\'s scheduler placed in cells.',
        ()),
    'cellboot_scheduler_cells_refused': (
        COUNTER, 'Times a cell\'s scheduler found no host for a request '
        'that the cell\'s aggregate said it could take (a stale '
        'aggregate).', ()),
    'cellboot_scheduler_cells_unreachable': (
        COUNTER, 'Times a cell did not answer the API level\'s scheduler.',
        ()),
    'cellboot_scheduler_no_valid_host': (
        COUNTER, 'Requests a scheduler found no place for (NoValidHost), '
        'by level (api: no cell; cell: no host of the cell) and by the '
        'filter or step that removed the last candidates.',
        ('level', 'reason')),
    'cellboot_scheduler_claims_tried': (
        COUNTER, 'Claims a cell\'s scheduler wrote for its decisions, by '
        'cell.', ('cell',)),
    'cellboot_scheduler_failed_claims': (
        COUNTER, 'Claims that failed because another scheduler took the '
        'room first (the decision is made again), by cell.', ('cell',)),
    'cellboot_scheduler_generation_conflicts': (
        COUNTER, 'Resource provider writes that lost a race '
        '(generation conflict) and were decided again, in this process.',
        ()),
    'cellboot_db_retries': (
        COUNTER, 'Database transactions run again after a deadlock or a '
        'lock timeout, in this process.', ()),
    'cellboot_cell_usable': (
        GAUGE, 'Whether the API level\'s scheduler may send requests to a '
        'cell now (0: its database does not answer, its aggregate is '
        'missing or stale), by cell.', ('cell',), min),
}


def _add(one, other):
    return one + other


_lock = threading.Lock()
_sources = weakref.WeakSet()


def register(source):
    """Report ``source.samples()`` at every scrape, while it lives."""
    with _lock:
        _sources.add(source)


class SourcesCollector(registry.Collector):
    """The metric families of ``FAMILIES`` from the registered objects."""

    def collect(self):
        with _lock:
            sources = list(_sources)
        totals = {name: {} for name in FAMILIES}
        for source in sources:
            try:
                samples = list(source.samples())
            except Exception as exc:
                # A scrape shows what it can; one object that cannot
                # say what it holds costs its own figures only.
                LOG.warning('Metrics of %r could not be read: %s', source,
                            exc)
                continue
            for name, labels, value in samples:
                key = tuple(str(labels[label])
                            for label in FAMILIES[name][2])
                values = totals[name]
                if key in values:
                    combine = (FAMILIES[name][3:] or (_add,))[0]
                    value = combine(values[key], value)
                values[key] = value
        for name, (kind, doc, label_names, *_combine) in FAMILIES.items():
            cls = (core.GaugeMetricFamily if kind == GAUGE
                   else core.CounterMetricFamily)
            family = cls(name, doc, labels=list(label_names))
            for key, value in sorted(totals[name].items()):
                family.add_metric(list(key), value)
            yield family


core.REGISTRY.register(SourcesCollector())
