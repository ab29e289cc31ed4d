"""The states a flow can be in, as operators name them.

Apart from ``lookup`` (which imports TaskFlow's persistence) so that the
command line and the API can check a ``--state``/``?state=`` cheaply.
"""

from taskflow import states

# States a flow ends in; a flow in one is done, whoever else still
# holds an engine on it must not write over it.
FINISHED_STATES = (states.SUCCESS, states.REVERTED, states.FAILURE,
                   states.REVERT_FAILURE)

FLOW_STATES = (states.PENDING, states.RUNNING, states.SUCCESS,
               states.FAILURE, states.REVERTED, states.SUSPENDED,
               states.RESUMING, states.REVERTING, states.SUSPENDING)


def flow_state(text):
    """``text`` as a flow state (any case); ValueError if it is none."""
    state = text.strip().upper()
    if state not in FLOW_STATES:
        raise ValueError(f'{text!r} is no flow state; use one of '
                         f'{", ".join(FLOW_STATES)} (any case)')
    return state
