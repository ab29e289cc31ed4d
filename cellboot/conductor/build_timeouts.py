"""BUILD timeouts: builds whose compute host never answered.

A compute host that dies after it got a build (or a cast to it that is
lost) leaves the instance building on that host for ever, holding its
claim. A cell conductor's sweep finds the instances of its cell that
have been building, unchanged, for longer than ``[conductor]
build_timeout``, and ends each in ERROR with the fault ``Build timed out
after N s on host H``, an action event, and its claim given back
(``fates.end_build_in_error``). One building without a host (which no
flow leaves: the boot flow creates the instance on its chosen host) is
ended too, with ``... before any host took it``: the cell cannot see
boot flows, but no boot flow will come back for it.

What is not stuck is left alone: an instance a reschedule flow of the
cell is still working on (the flow claims the next host and casts to
it; a flow that nobody runs, its conductor dead, is handed over by the
same sweep's ``unowned_flows.UnownedFlows``), and any instance that
changed within the timeout (a host that took the build moved it to
spawning; a reschedule reset it). The ERROR is a conditional update on
exactly the condition the instance was selected on, so of two
conductors sweeping at once only one acts, and a compute host that
finishes late finds the instance no longer building: it removes the
server and releases its claim (``cellboot.compute.manager``).

Before that, a build its host never took (a cast a broker lost) is
sent again, or moved to an alternate, by ``untaken_builds``, after the
much shorter ``[conductor] build_not_taken_timeout``: only a build that
a live host took and never finished, or that was re-sent as often as
allowed, reaches the timeout here (a build with no alternate left ends
in ERROR in the reschedule flow instead).

The cell conductor holds no API database credentials: claims go back
through its scheduler client, and everything else is in its cell
database.
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from cellboot.builds import claims
from cellboot.builds import fates
from cellboot.conductor import untaken_builds
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.flowrun import records
from cellboot.objects import fault_messages
from cellboot.objects import instance as instance_obj

LOG = logging.getLogger(__name__)

# The event a timed-out build records under its create action.
EVENT_BUILD_TIMEOUT = 'conductor_build_timeout'

# Fault code of a build that no host finished (HTTP-like, as in Nova).
FAULT_CODE = 500


def _last_change(instance):
    return instance.updated_at or instance.created_at


def fault_message(timeout, host):
    if host is None:
        return f'Build timed out after {timeout} s before any host took it'
    return f'Build timed out after {timeout} s on host {host}'


class BuildTimeouts:
    """The cell conductor's check; ``manager`` is its manager.

    Uses ``manager.cell_mapping`` (the cell database),
    ``manager.persistence()`` (where its reschedule flows are) and
    ``manager.scheduler`` (``release_resources``).
    """

    def __init__(self, manager):
        self.manager = manager
        # Claims of timed-out instances the scheduler did not take back
        # yet: tried again at every sweep.
        self.claims = claims.ClaimReleaser('timed-out instance')
        self.untaken = untaken_builds.UntakenBuilds(manager)

    def sweep_once(self, context):
        """Re-send the untaken builds of the cell, time out the stuck
        ones; ``{'timed_out': n, 'recast': n, 'reschedule': n}``."""
        self.claims.retry(context, self.manager.scheduler)
        now = timeutils.utcnow()
        timeout = CONF.conductor.build_timeout
        cutoff = now - datetime.timedelta(seconds=timeout)
        not_taken = CONF.conductor.build_not_taken_timeout
        untaken_cutoff = now - datetime.timedelta(seconds=not_taken)
        cell = self.manager.cell_mapping
        with cb_context.target_cell(context, cell) as cctxt:
            stuck = instance_obj.Instance.get_builds_older_than(
                cctxt, max(cutoff, untaken_cutoff) if not_taken else cutoff)
        done = {'timed_out': 0, untaken_builds.RECAST: 0,
                untaken_builds.RESCHEDULE: 0}
        if not stuck:
            return done
        rescheduling = self._rescheduling()
        for instance in stuck:
            if instance.uuid in rescheduling:
                LOG.debug('Instance %s is building for longer than %s s, '
                          'but a reschedule flow works on it', instance.uuid,
                          not_taken)
                continue
            if (not_taken and untaken_builds.is_untaken(instance) and
                    _last_change(instance) < untaken_cutoff):
                acted = self.untaken.handle(context, instance,
                                            untaken_cutoff)
                if acted is not None:
                    done[acted] += 1
                    continue
            if _last_change(instance) < cutoff and self._time_out(
                    context, instance, cutoff, timeout):
                done['timed_out'] += 1
        return done

    def _rescheduling(self):
        """Instance uuids an unfinished reschedule flow of the cell has."""
        persistence = self.manager.persistence()
        if persistence is None:
            return set()
        # Corrupt flows are never run: the instances they name are not
        # left alone for them (the same sweep's UnownedFlows reports them).
        return {uuid
                for flow in records.unfinished(persistence, self.manager.KIND,
                                               self.manager.LEVEL, warn=False)
                for uuid in flow['instance_uuids']}

    def _time_out(self, context, instance, cutoff, timeout):
        """ERROR, fault, event, then the claim; whether this call acted."""
        message = fault_message(timeout, instance.host)
        if not fates.end_build_in_error(
                context, instance,
                lambda cctxt: instance.time_out_build(cctxt, cutoff),
                message, EVENT_BUILD_TIMEOUT, host=instance.host,
                cell_mapping=self.manager.cell_mapping, code=FAULT_CODE,
                user_message=fault_messages.BUILD_TIMED_OUT):
            return False
        LOG.warning('Instance %s: %s; set to ERROR', instance.uuid, message)
        self.claims.release(context, self.manager.scheduler,
                            instance.uuid)
        return True
