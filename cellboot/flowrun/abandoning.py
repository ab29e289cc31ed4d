"""An operator's abandon of a flow: ended for good, its instances settled.

``cellboot-manage flows abandon FLOW`` and ``POST /os-flows/{id}/action
{"abandon": ...}`` are for a flow an operator gives up on rather than
retries (``cellboot.flowrun.retrying``): a FAILURE flow whose revert
failed, or an unfinished flow nobody runs whose servers should simply
fail. The same flows are accepted, and refused, as for a retry, with
the same checks (``retrying.check_actionable``,
``retrying.check_nobody_runs``): refused are a corrupt flow, one that
ended SUCCESS or REVERTED or was abandoned already, one somebody runs
(with a jobboard, one whose job is posted or held: a conductor that
died loses its claim after ``[jobboard] claim_expiry``), without a
jobboard another host's unfinished flow (only that host can tell
whether its conductor is alive), and a cross-cell flow (``SETTLED_KINDS``:
only boot and reschedule flows have their servers settled after an
abandon).

What the abandon writes, in one transaction that first advances the
flow's fencing generation (``fencing.advance``: a run of the flow that
might still be alive is fenced out, its next write fails): the flow
goes to FAILURE (conditionally on the state it was read in), and its
meta gets the note ``abandoned`` (``cellboot.flowrun.abandons``). A
FAILURE flow is never resumed: the conductors' start and the sweeps'
hand-over only take unfinished flows (``records.unfinished``), and a
retry of it is refused.

Nothing is settled here: what settles a flow's instances needs a
conductor (the scheduler that gives the claims back, and keeps trying
when it does not answer). The next sweep settles them, as it settles
those of a flow that ended FAILURE on its own, with a fault that says
an operator abandoned the flow (and why, when a reason was given):

* a boot flow's build requests (the super conductors' sweep,
  ``conductor.ended_flows``, not waiting ``[conductor]
  orphan_build_request_timeout``): a build that never reached a cell is
  buried in cell0; one in a cell that no host took is ended in ERROR
  and its claims given back; the build requests go;
* a reschedule flow's instance (the cell conductors' sweep,
  ``conductor.abandoned_flows``): ended in ERROR, its claims given back,
  unless a compute host took the build.

A build a compute host took is that host's: it finishes it, or fails
it, or the cell's BUILD timeout ends it (``Build timed out after N s on
host H``, which is what happened to it).

The abandon is announced with the notification ``flow.abandon``
(docs/operations.md), its reason the instances' fault text.
"""

import re
import types

from taskflow import states

from cellboot.flowrun import abandons
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import fencing
from cellboot.flowrun import kinds
from cellboot.flowrun import lookup
from cellboot.flowrun import retrying
from cellboot.flowrun import tables
from cellboot import notifications

# How the refusals word it: "Flow X cannot be abandoned: ...".
ACTION = 'abandoned'

# The kinds whose abandoned flows' instances a sweep settles (module
# doc). A cross-cell move's build is marked handed back in its cell and
# its build request is the move's: nothing settles those for an
# abandoned move yet, so such a flow is refused (retry it instead).
SETTLED_KINDS = (kinds.KIND_BOOT, kinds.KIND_RESCHEDULE)

# Longest reason kept (characters), and what it may hold: no control
# character or line break (it ends up in instance faults, logs and
# terminals). The REST schema (an ECMA-262 pattern) and
# ``valid_reason`` share both.
MAX_REASON = 255
REASON_PATTERN = abandons.TEXT_PATTERN


def valid_reason(reason):
    """``reason`` if an operator's reason may be stored as it is.

    ValueError otherwise: a reason is text of at most ``MAX_REASON``
    characters that matches ``REASON_PATTERN``. Blank reads as none.
    """
    if reason is None:
        return None
    if not isinstance(reason, str):
        raise ValueError('the reason must be a string')
    if len(reason) > MAX_REASON:
        raise ValueError(f'the reason is longer than {MAX_REASON} '
                         f'characters')
    if not re.match(REASON_PATTERN, reason):
        raise ValueError('the reason must be printable text (no control '
                         'characters or line breaks)')
    return reason.strip() or None


def close(url, flow_uuid, from_state, by, reason):
    """End flow ``flow_uuid`` at ``url`` in FAILURE with its note."""
    engine = flow_db.get_backend(url).engine
    note = abandons.new_note(by, reason, from_state)

    def merge(meta):
        meta[abandons.KEY] = note
        return meta

    with engine.begin() as conn:
        try:
            fencing.advance(conn, flow_uuid)
        except fencing.CorruptFence as exc:
            raise retrying.refused(flow_uuid, str(exc), ACTION)
        if not tables.change_flow_state(conn, flow_uuid, from_state,
                                        states.FAILURE):
            raise retrying.refused(flow_uuid, 'its state changed meanwhile; '
                                              'look at it again (flows show)',
                                   ACTION)
        tables.merge_flow_meta(conn, flow_uuid, merge)
    return note


def abandon(context, flow_uuid, by, reason=None,
            timeout=lookup.CELL_TIMEOUT):
    """Abandon flow ``flow_uuid`` (module doc); what was done, as a dict.

    ``by`` names who asked, ``reason`` (``valid_reason``) why; both are
    recorded in the flow's meta and the instances' faults. FlowNotFound,
    FlowLookupIncomplete, FlowActionRefused, JobboardUnavailable;
    ValueError for a reason ``valid_reason`` refuses.
    """
    reason = valid_reason(reason)
    place, flow = lookup.locate_flow(context, flow_uuid, timeout)
    retrying.check_actionable(flow, ACTION)
    if flow['kind'] not in SETTLED_KINDS:
        raise retrying.refused(
            flow_uuid, f'it is a {flow["kind"]} flow, whose servers no '
                       f'sweep settles once it is abandoned; retry it '
                       f'(flows retry) instead', ACTION)
    board = retrying.connect_board(flow, place)
    try:
        retrying.check_nobody_runs(flow, place, board, ACTION)
        note = close(place.database_connection, flow_uuid, flow['state'], by,
                     reason)
    finally:
        if board is not None:
            board.close()
    notifications.flow_event(
        context, types.SimpleNamespace(uuid=flow_uuid, name=flow['name'],
                                       state=states.FAILURE,
                                       meta=flow['meta']),
        'abandoned', reason=abandons.fault_message(flow_uuid, note))
    settled_by = ('the super conductors\' next sweep' if place.cell_name is
                  None else f'the next sweep of cell {place.cell_name}\'s '
                            f'conductors')
    return {'flow': flow_uuid, 'kind': flow['kind'],
            'from_state': flow['state'], 'location': flow['location'],
            'instance_uuids': flow['instance_uuids'], 'note': note,
            'settled_by': settled_by}
