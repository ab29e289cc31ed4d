"""What the conductors' flows tell operators while they run.

Two listeners are attached to every engine (``attached``):

* ``LoggingListener`` — the one logging listener: flows starting and
  ending at INFO, atoms at DEBUG, failures and reverts at WARNING with
  the failure's type and message. Atom results are never logged: those
  of a multi-create hold hundreds of entries, and the persisted flow
  keeps them for ``flows show``;
* TaskFlow's ``DurationListener`` — each atom's and the flow's duration
  (seconds), stored in their details' meta under ``duration``.
"""

import contextlib
import logging as py_logging

from oslo_log import log as logging
from taskflow.listeners import base
from taskflow.listeners import timing
from taskflow import states
from taskflow.types import failure as tf_failure

from cellboot.workflows import lookup

LOG = logging.getLogger(__name__)

_FLOW_INFO_STATES = frozenset({states.RUNNING, states.SUCCESS,
                               states.SUSPENDED})
_FLOW_WARNING_STATES = frozenset({states.FAILURE, states.REVERTED})
_ATOM_WARNING_STATES = frozenset({states.FAILURE, states.REVERT_FAILURE,
                                  states.REVERTED, states.RETRYING})


def describe_failure(failure):
    """``Type: message`` of a TaskFlow Failure, on one line."""
    return f'{lookup.failure_type(failure)}: {failure.exception_str}'


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

    def _atom_changed(self, kind, name, state, details):
        result = details.get('result')
        if isinstance(result, tf_failure.Failure):
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


@contextlib.contextmanager
def attached(engine, label):
    """Attach the logging and timing listeners for one run of ``engine``.

    ``label`` names the run in the logs (the flow detail uuid and what
    it builds).
    """
    with LoggingListener(engine, label), timing.DurationListener(engine):
        yield engine
