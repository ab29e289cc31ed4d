"""A flow's atoms and outcome, as Prometheus metrics.

Attached to every engine beside the logging and timing listeners
(``engine.run_engine``), with their notion of when an atom starts and
ends. Each atom's run (or revert) is observed in
``cellboot_flow_atom_duration_seconds`` by flow kind, atom and the state
it ended in, when it ends: a histogram per atom is what tells an
operator which step of the boots got slow, which the per-flow durations
persisted for ``flows show`` cannot do across thousands of flows. Each
stop of a flow counts in ``cellboot_flows_ended`` by kind and state.

The kind is the flow detail's name, which is the kind's flow name
(``boot``, ``reschedule``, ``cross-cell``): only flows of the registry
run (``kinds``), so the label takes few values.
"""

from oslo_utils import timeutils
from taskflow.listeners import base

from cellboot.flowrun import listeners
from cellboot import metrics


class MetricsListener(base.Listener):
    """Observe atom durations and flow outcomes (``cellboot.metrics``)."""

    def __init__(self, engine):
        super().__init__(engine)
        self._kind = engine.storage.flow_name
        self._watches = {}

    def _flow_receiver(self, state, details):
        if state in listeners._FLOW_STOP_STATES:
            metrics.FLOWS_ENDED.labels(kind=self._kind,
                                       state=state.lower()).inc()

    def _atom_changed(self, name, state):
        if state in listeners._STARTING_STATES:
            self._watches[name] = timeutils.StopWatch().start()
        elif state in listeners._ENDING_STATES and name in self._watches:
            metrics.ATOM_DURATION.labels(
                kind=self._kind, atom=name, state=state.lower()).observe(
                    self._watches.pop(name).elapsed())

    def _task_receiver(self, state, details):
        self._atom_changed(details['task_name'], state)

    def _retry_receiver(self, state, details):
        self._atom_changed(details['retry_name'], state)
