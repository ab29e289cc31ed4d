"""What the conductors' flows tell operators while they run.

Two listeners are attached to every engine (``attached``):

* ``LoggingListener`` — the one logging listener: flows starting and
  ending at INFO, atoms at DEBUG, failures and a flow's revert at
  WARNING with the failure's type and message (an atom's revert at
  INFO: the failure that caused it is the warning). Atom results are
  never logged: those of a multi-create hold hundreds of entries, and
  the persisted flow keeps them for ``flows show``;
* ``TimingListener`` — each atom's and the flow's duration (seconds),
  stored in their details' meta under ``duration``, as TaskFlow's
  ``DurationListener`` does, but handed to the storage once, when the
  flow stops: ``CellbootEngine`` writes them with the flow's final state,
  in the run's last transaction (the DurationListener's write per atom
  cost a sixth of a boot flow's persistence transactions). A conductor
  that dies mid-way loses the durations of that run (the states and
  results are kept).

The logging listener also sends a flow's end as a notification
(``flow.end``, ``flow.revert``, ``flow.error``: ``notify_flow_end``).
"""

import collections
import contextlib
import logging as py_logging
import types

from oslo_log import log as logging
from oslo_utils import timeutils
from taskflow.listeners import base
from taskflow import states
from taskflow.types import failure as tf_failure

from cellboot.flowrun import summaries
from cellboot import notifications

LOG = logging.getLogger(__name__)

_FLOW_INFO_STATES = frozenset({states.RUNNING, states.SUCCESS,
                               states.SUSPENDED})
_FLOW_WARNING_STATES = frozenset({states.FAILURE, states.REVERTED})
# An atom's REVERTED is not among them: it follows a failure already
# logged (an atom's FAILURE, and the flow's own REVERTED), and a flow of
# ten atoms would repeat it ten times. It is logged at INFO.
_ATOM_WARNING_STATES = frozenset({states.FAILURE, states.REVERT_FAILURE,
                                  states.RETRYING})
_ATOM_INFO_STATES = frozenset({states.REVERTED})

_STARTING_STATES = frozenset({states.RUNNING, states.REVERTING})
_ENDING_STATES = frozenset({states.SUCCESS, states.FAILURE,
                            states.REVERTED, states.REVERT_FAILURE})
_FLOW_STOP_STATES = frozenset({states.SUCCESS, states.FAILURE,
                               states.REVERTED, states.SUSPENDED})
# The flow.* notification of each final state.
_FLOW_END_EVENTS = {states.SUCCESS: 'succeeded', states.FAILURE: 'failed',
                    states.REVERTED: 'reverted'}


def describe_failure(failure):
    """``Type: message`` of a TaskFlow Failure, on one line."""
    return f'{summaries.failure_type(failure)}: {failure.exception_str}'


class LoggingListener(base.Listener):
    """Log a flow's and its atoms' state changes, naming the flow."""

    def __init__(self, engine, label):
        super().__init__(engine)
        self._label = label

    def _flow_receiver(self, state, details):
        if state in _FLOW_WARNING_STATES:
            level = py_logging.WARNING
        elif state in _FLOW_INFO_STATES:
            level = py_logging.INFO
        else:
            level = py_logging.DEBUG
        LOG.log(level, 'Flow %s (%s): %s', details['flow_name'],
                self._label, state)
        if state in _FLOW_END_EVENTS:
            notify_flow_end(self._engine.storage, state)

    def _atom_changed(self, kind, name, state, details):
        result = details.get('result')
        if state in _ATOM_INFO_STATES:
            LOG.info('Flow %s: %s %s %s', self._label, kind, name, state)
        elif isinstance(result, tf_failure.Failure):
            LOG.warning('Flow %s: %s %s %s: %s', self._label, kind, name,
                        state, describe_failure(result))
        elif state in _ATOM_WARNING_STATES:
            LOG.warning('Flow %s: %s %s %s', self._label, kind, name, state)
        else:
            LOG.debug('Flow %s: %s %s %s', self._label, kind, name, state)

    def _task_receiver(self, state, details):
        self._atom_changed('task', details['task_name'], state, details)

    def _retry_receiver(self, state, details):
        self._atom_changed('retry', details['retry_name'], state, details)


def notify_flow_end(storage, state):
    """The flow's end as a ``flow.*`` notification (``notifications``).

    Sent under the context the flow was started for (its meta's
    ``context``), with the first failure of its atoms as the reason.
    """
    if not notifications.events.enabled():
        return
    meta = storage.flow_meta or {}
    failures = list(storage.get_execute_failures().values())
    reason = None
    if failures:
        reason = failures[0].exception or describe_failure(failures[0])
    flow = types.SimpleNamespace(uuid=storage.flow_uuid,
                                 name=storage.flow_name, state=state,
                                 meta=meta)
    notifications.flow_event(meta.get('context'), flow,
                             _FLOW_END_EVENTS[state], reason=reason)


class TimingListener(base.Listener):
    """Time every atom run (and revert) and the flow; persist at the end.

    An atom that runs more than once (a retried subflow) accumulates its
    runs' durations.
    """

    def __init__(self, engine, persistence):
        super().__init__(engine)
        self._persistence = persistence
        self._watches = {}
        self._durations = collections.defaultdict(float)
        self._flow_watch = None

    def _flow_receiver(self, state, details):
        if state == states.RUNNING and self._flow_watch is None:
            self._flow_watch = timeutils.StopWatch().start()
        elif state in _FLOW_STOP_STATES and self._flow_watch is not None:
            self._save(self._flow_watch.elapsed())

    def _atom_changed(self, name, state):
        if state in _STARTING_STATES:
            self._watches[name] = timeutils.StopWatch().start()
        elif state in _ENDING_STATES and name in self._watches:
            self._durations[name] += self._watches.pop(name).elapsed()

    def _task_receiver(self, state, details):
        self._atom_changed(details['task_name'], state)

    def _retry_receiver(self, state, details):
        self._atom_changed(details['retry_name'], state)

    def _save(self, flow_duration):
        if self._persistence is None:
            return
        storage = self._engine.storage
        try:
            for name, duration in self._durations.items():
                storage.update_atom_metadata(name, {'duration': duration})
            storage.update_flow_metadata({'duration': flow_duration})
        except Exception as exc:
            # Durations are for operators; a flow never fails for them.
            LOG.warning('Could not record the durations of flow %s: %s',
                        storage.flow_uuid, exc)


@contextlib.contextmanager
def attached(engine, label, persistence=None):
    """Attach the logging and timing listeners for one run of ``engine``.

    ``label`` names the run in the logs (the flow detail uuid and what
    it builds); ``persistence`` is the database URL the flow is
    persisted in (None: in memory, durations are not kept).
    """
    with LoggingListener(engine, label), \
            TimingListener(engine, persistence):
        yield engine
