"""An operator's retry of a flow: handed back to the conductors.

``cellboot-manage flows retry FLOW`` and ``POST /os-flows/{id}/action
{"retry": null}`` take a flow that ended FAILURE (an atom failed and its
revert failed too: nothing happens to it on its own) or that is
unfinished and run by nobody (its conductor died and no other one took
it: ``owners``), and make the conductors finish it from its last good
atom.

Why hand it back rather than run it here: a flow's atoms need what only
a conductor has (the scheduler, the RPC clients of the cells and compute
hosts, the level's transient values: ``runner.Runner.transient_for``),
and a conductor is the process that owns a flow, renews its claim and
is fenced out when another takes it. The command line and the API
therefore only prepare the flow, under its fence, and give it to the
conductors the way a sweeper does (``conductor.unowned_flows``):

* with a jobboard, the flow's job is posted on its kind's board
  (``jobboard.post``, idempotent): a conductor of that kind claims it
  within a second or so and resumes the flow (``records.take_over``);
* without one, the flow's meta names its creating host as owner, with
  no process: the next sweep of a conductor of that host takes it
  (``owners.orphaned_here``), or that host's conductor resumes it when
  it starts (``[conductor] resume_flows``). Without a jobboard only that
  host can tell whether the flow's process is alive, hence run it: a
  stuck unfinished flow of another host is refused from here.

What the retry writes, in one transaction that first advances the flow's
fencing generation (``fencing.advance``: a run of the flow that might
still be alive is fenced out before anything changes): for a FAILURE
flow, every atom that did not end SUCCESS (the failed one, those whose
revert ran or failed, those never run) goes back to PENDING with its
outcome cleared, and the flow to SUSPENDED (a state TaskFlow resumes;
atoms that ended SUCCESS keep their result and are not run again, a
retry atom keeps its history so that it goes on with its next
alternative); every retried flow gets its owner handed back and one
entry in its meta's ``retries`` (``{'by', 'at', 'from_state'}``). The
atoms run again with ``resumed=True``: each is idempotent by design
and first undoes what a previous run of it may have left (``schedule``
gives back the claims of the dead run), so running a step again after
its revert, or after a revert that failed halfway, is safe.

Refused (``FlowActionRefused``, a 409): a flow that ended SUCCESS or
REVERTED (nothing to retry: the instances were settled by its revert),
a flow an operator abandoned (``cellboot.flowrun.abandoning``: its
instances are settled with a fault),
a corrupt flow (never run), a flow somebody runs, a flow whose fence
row holds no valid generation (``fencing.CorruptFence``: set by hand),
and a flow whose state changed between the check and the transaction.
"""

from oslo_utils import timeutils
from taskflow.persistence import models
from taskflow import states

from cellboot.conf import CONF
from cellboot.conf import jobboard as jobboard_conf
from cellboot import exception
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import fencing
from cellboot.flowrun import jobboard
from cellboot.flowrun import lookup
from cellboot.flowrun import owners
from cellboot.flowrun import records
from cellboot.flowrun import tables

# What a retried FAILURE flow is left in: a state TaskFlow resumes from
# and the sweepers count as unfinished.
REOPENED = states.SUSPENDED


def refused(flow_uuid, reason, action='retried'):
    return exception.FlowActionRefused(flow=flow_uuid, action=action,
                                       reason=reason)


def check_actionable(flow, action='retried'):
    """Refuse a flow no operator action applies to (corrupt, ended)."""
    if flow['corrupt']:
        raise refused(flow['uuid'], f'it is corrupt and is never run '
                                    f'({flow["corrupt"]})', action)
    if flow['state'] in tables.ENDED_FLOW_STATES:
        raise refused(flow['uuid'], f'it ended {flow["state"]}: nothing is '
                                    f'left to do for it', action)
    note = flow.get('abandoned')
    if note is not None:
        # Its instances are (being) settled by the sweeps: running it
        # again would build servers their owners saw fail.
        raise refused(flow['uuid'], f'it ended: {note["by"]} abandoned it '
                                    f'at {note["at"]}', action)


def check_nobody_runs(flow, place, board, action='retried'):
    """Refuse a flow somebody runs (``owners``), or may run.

    ``board``: the connected board of the flow's kind, None without a
    jobboard.
    """
    if board is not None:
        posted, holder = owners.board_holder(board, flow['uuid'])
        if posted:
            who = (f'conductor {holder} holds its job' if holder
                   else 'its job waits on the board for a conductor')
            raise refused(flow['uuid'], f'{who} ({board.name}); a '
                                        f'conductor that died loses its '
                                        f'claim after [jobboard] '
                                        f'claim_expiry', action)
        return
    if flow['state'] == states.FAILURE:
        return  # ended: no process runs it
    owner = flow['owner']
    if owners.orphaned_here(owner):
        return
    host = (owner or '').rpartition(':')[0] or owner
    if host == CONF.host:
        raise refused(flow['uuid'], f'its conductor {owner} is alive and '
                                    f'runs it', action)
    raise refused(flow['uuid'], f'it is owned by {owner}, on another host '
                                f'than {CONF.host}; without a jobboard '
                                f'only that host can tell whether its '
                                f'conductor is alive: run this there',
                  action)


def connect_board(flow, place):
    """The connected board of the flow's kind; None without a jobboard."""
    if CONF.jobboard.backend != jobboard_conf.REDIS:
        return None
    return jobboard.connect(flow['kind'], place.database_connection,
                            cell_name=place.cell_name)


def _reset(atom_detail):
    """A copy of ``atom_detail`` ready to run again, or None if it stays.

    A SUCCESS atom stays (its result holds), only sent forward again if
    the revert had marked it; any other goes back to PENDING, a retry
    atom keeping its history.
    """
    if atom_detail.state == states.SUCCESS:
        if atom_detail.intention == states.EXECUTE:
            return None
        reset = atom_detail.copy()
        reset.intention = states.EXECUTE
        return reset
    if atom_detail.state == states.PENDING and \
            atom_detail.intention == states.EXECUTE:
        return None   # never ran: nothing to reset
    reset = atom_detail.copy()
    history = reset.results if isinstance(reset, models.RetryDetail) \
        else None
    reset.reset(states.PENDING)
    if history is not None:
        reset.results = history
    return reset


def _note(by, from_state):
    """The meta merge of a retried flow: owner handed back, and why."""
    def merge(meta):
        meta['owner'] = meta.get('conductor') or CONF.host
        meta.pop('owned_since', None)
        meta['retries'] = list(meta.get('retries') or ()) + [
            {'by': by, 'at': timeutils.utcnow().isoformat(),
             'from_state': from_state or states.PENDING}]
        return meta
    return merge


def reopen(url, flow_uuid, from_state, by):
    """Prepare flow ``flow_uuid`` at ``url`` for its retry (module doc).

    Returns the names of the atoms set to run again.
    """
    changed = {}
    if from_state == states.FAILURE:
        detail = records.load_detail(url, flow_uuid)
        for atom_detail in detail:
            reset = _reset(atom_detail)
            if reset is not None:
                changed[atom_detail.uuid] = reset
    engine = flow_db.get_backend(url).engine
    with engine.begin() as conn:
        try:
            fencing.advance(conn, flow_uuid)
        except fencing.CorruptFence as exc:
            # A row set by hand: the operator fixes it first.
            raise refused(flow_uuid, str(exc))
        state = from_state if from_state != states.FAILURE else REOPENED
        if not tables.change_flow_state(conn, flow_uuid, from_state, state):
            raise refused(flow_uuid, 'its state changed meanwhile; look '
                                     'at it again (flows show)')
        tables.update_atoms(conn, changed)
        tables.merge_flow_meta(conn, flow_uuid, _note(by, from_state))
    return sorted(reset.name for reset in changed.values())


def retry(context, flow_uuid, by, timeout=lookup.CELL_TIMEOUT):
    """Retry flow ``flow_uuid`` (module doc); what was done, as a dict.

    ``by`` names who asked (recorded in the flow's meta). FlowNotFound,
    FlowLookupIncomplete, FlowActionRefused, JobboardUnavailable.
    """
    place, flow = lookup.locate_flow(context, flow_uuid, timeout)
    check_actionable(flow)
    board = connect_board(flow, place)
    try:
        check_nobody_runs(flow, place, board)
        reset = reopen(place.database_connection, flow_uuid, flow['state'],
                       by)
        if board is not None:
            jobboard.post(board, flow['kind'], flow_uuid)
            handed_to = f'the conductors of board {board.name}'
        else:
            handed_to = (f'the conductors of host '
                         f'{flow["conductor"] or CONF.host}')
    finally:
        if board is not None:
            board.close()
    return {'flow': flow_uuid, 'kind': flow['kind'],
            'from_state': flow['state'], 'location': flow['location'],
            'reset_atoms': reset, 'handed_to': handed_to}
