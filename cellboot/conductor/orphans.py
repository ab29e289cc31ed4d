"""Orphan builds: accepted boots that no conductor is working on.

The API commits a request's rows, then casts it to a super conductor;
the rows are the source of truth. A cast can be lost (the API died
after its commit, the broker dropped the message), and a flow can be
left unfinished by a conductor that is gone. The super conductor's
sweep finds both:

* build requests older than ``[conductor]
  unstarted_build_request_timeout`` (30 s: a lost cast should cost
  seconds, not minutes) whose request (its reservation, see
  ``records.boot_flow_key``) has no boot flow: the cast's payload is
  rebuilt from the API database and
  handed to the manager's own ``schedule_and_build_instances``, which
  creates the flow under its deterministic uuid, so a cast arriving late
  (a request whose flow was merely slow to start), or another conductor
  sweeping at the same time, never makes a second one;
* build requests older than ``orphan_build_request_timeout`` whose boot
  flow has ended (FAILURE, or a bug), or of any age past the first
  timeout whose flow an operator abandoned (``flowrun.abandoning``):
  settled where their instance is (``cellboot.conductor.ended_flows``);
* boot flows unfinished for longer than that timeout that nobody runs:
  with a jobboard, those no job on the board references; without one,
  those of this host that no live conductor process of this host owns.
  Each is given to the manager's ``runner.hand_over``, which posts a
  job for it or resumes it (``cellboot.conductor.unowned_flows``, which
  the cell conductors' sweep uses for their reschedule flows too).

With a jobboard the sweep runs under a Redis lock
(``NAMESPACE.sweeper.boot``), so only one super conductor sweeps at a
time, renewed at each step and within a time budget
(``cellboot.conductor.sweep_lock``); the checks stay idempotent without
it.
"""

import collections
import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from cellboot.conductor import ended_flows
from cellboot.conductor import handbacks
from cellboot.conductor import sweep_lock
from cellboot.conductor import unowned_flows
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.flowrun import abandons
from cellboot.flowrun import backend as flow_db
from cellboot import exception
from cellboot.flowrun import flow_states
from cellboot.flowrun import records
from cellboot.flowrun import tables
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import request_spec as request_spec_obj

LOG = logging.getLogger(__name__)


def lock_name():
    """The Redis key of the super conductors' sweep lock."""
    return sweep_lock.lock_name()


class OrphanBuildRequests:
    """The super conductor's check; ``manager`` is its manager.

    Uses ``manager.KIND``, ``persistence()``, ``runner`` (its ``board``
    and ``hand_over``), ``scheduler`` and
    ``schedule_and_build_instances`` (see the
    conductor manager).
    """

    def __init__(self, manager):
        self.manager = manager
        self._locks = sweep_lock.Locks()
        self._ended = None

    def sweep_once(self, context):
        """``{'started': requests, 'settled': build requests,
        'handed_over': flows}``; {} when another conductor sweeps."""
        if self.manager.persistence() is None:
            # Without persisted flows nothing tells an orphan from a
            # request whose flow is running.
            return {}
        sweep = sweep_lock.Sweep(
            self._locks.lock(self.manager.runner.board))
        if not sweep.start():
            return {}
        try:
            now = timeutils.utcnow()
            timeout = CONF.conductor.orphan_build_request_timeout
            cutoff = now - datetime.timedelta(seconds=timeout)
            unstarted = now - datetime.timedelta(seconds=min(
                timeout, CONF.conductor.unstarted_build_request_timeout))
            self._ended_flows().retry(context)
            done = self._start_orphans(context, unstarted, cutoff, sweep)
            done['handed_over'] = unowned_flows.hand_over_unowned(
                self.manager, cutoff, sweep)
            return done
        finally:
            sweep.end()

    def _ended_flows(self):
        if self._ended is None:
            self._ended = ended_flows.EndedFlowRequests(
                self.manager.scheduler)
        return self._ended

    # -- build requests without a flow -------------------------------------

    def _start_orphans(self, context, unstarted, cutoff, sweep):
        """Start the requests older than ``unstarted`` without a flow;
        settle those older than ``cutoff`` whose flow ended
        (``cellboot.conductor.ended_flows``).

        The build requests older than ``unstarted`` are read, the others
        only when there is something to act on (``_to_act_on``): under
        load the API database holds hundreds of young ones, which every
        sweep would otherwise fetch and decode for nothing.
        """
        done = {'started': 0, 'settled': 0}
        old = _requests(build_request_obj.BuildRequest.get_created_before(
            context, unstarted))
        if old:
            # A build request a cross-cell flow wrote is the move's
            # until that flow ends (``handbacks.moving``).
            moved = handbacks.moving(self.manager)
            old = {key: brs for key, brs in old.items()
                   if not any(br.instance_uuid in moved for br in brs)}
        if not old:
            return done
        uuids = {records.flow_uuid(self.manager.KIND, key): key
                 for key in old}
        engine = flow_db.get_backend(self.manager.persistence()).engine
        states = tables.flow_states(engine, uuids)
        abandoned = abandons.of_flows(engine, states)
        for flow_uuid, key in _to_act_on(context, old, uuids, states,
                                         unstarted, cutoff,
                                         abandoned).items():
            if not sweep.go_on():
                break
            if flow_uuid in states:
                done['settled'] += self._ended_flows().settle(
                    context, flow_uuid, states[flow_uuid], old[key], cutoff,
                    note=abandoned.get(flow_uuid))
            elif self._start(context, key, old[key]):
                done['started'] += 1
        return done

    def _start(self, context, key, build_requests):
        """Hand one orphan request to the boot path; whether it went."""
        uuids = [br.instance_uuid for br in build_requests]
        try:
            specs = [request_spec_obj.RequestSpec.get_by_instance_uuid(
                context, uuid).spec for uuid in uuids]
        except exception.RequestSpecNotFound as exc:
            LOG.warning('Orphan build request(s) %s of request %s cannot '
                        'be started: %s', ', '.join(uuids), key, exc)
            return False
        first = build_requests[0]
        rctxt = cb_context.RequestContext(user_id=first.user_id,
                                          project_id=first.project_id,
                                          overwrite=False)
        LOG.info('Build request(s) %s of request %s have no flow after %s '
                 's (the cast was lost); starting it as request %s',
                 ', '.join(uuids), key,
                 CONF.conductor.unstarted_build_request_timeout,
                 rctxt.request_id)
        self.manager.schedule_and_build_instances(
            rctxt, [br.as_cast() for br in build_requests], specs)
        return True


def _to_act_on(context, old, uuids, states, unstarted, cutoff,
               abandoned=()):
    """``{flow uuid: key}`` of the ``old`` requests to start or settle.

    ``uuids`` is ``{flow uuid: key}`` of the requests in ``old``,
    ``states`` the states of those flows that exist. Left alone: a
    request whose flow runs (or is handed over below), and one whose
    flow ended but whose build requests are not older than ``cutoff``
    (the flow may have ended only just now), unless an operator
    abandoned the flow (``abandoned``: its uuids): its run was fenced
    out, nothing will come back for them.

    ``old`` holds the build requests older than ``unstarted``, and a
    multi-create's are written one after the other: for a moment some
    of them can be older and the others not, and ``old`` has only part
    of the request. Acting on that part would leave the rest out of the
    request's flow for good, so such a request is left for a later
    sweep, as it was when all build requests were read. The younger
    ones are read for that only when there is something to act on,
    which under load there rarely is.
    """
    idle = {flow_uuid: key for flow_uuid, key in uuids.items()
            if flow_uuid not in states or (
                states[flow_uuid] in flow_states.FINISHED_STATES
                and (flow_uuid in abandoned or
                     max(br.created_at for br in old[key]) < cutoff))}
    if not idle:
        return idle
    young = _requests(build_request_obj.BuildRequest.get_created_since(
        context, unstarted))
    return {flow_uuid: key for flow_uuid, key in idle.items()
            if key not in young}


def _requests(build_requests):
    """Build requests by request key (reservation; see the module doc).

    A build request without a reservation id (written by a foreign API)
    is a request of its own: nothing else says which ones came together.
    """
    grouped = collections.defaultdict(list)
    for br in build_requests:
        key = records.boot_flow_key([br.as_cast()])
        grouped[key].append(br)
    return grouped
