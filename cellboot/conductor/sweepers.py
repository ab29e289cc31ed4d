"""The conductors' periodic checks: nothing stays stuck in BUILD.

A lost message leaves work that no flow will ever finish: a cast from the
API that never reached a super conductor (the API died after its commit,
the broker dropped it), a compute host that died after it got a build.
Each conductor process runs the checks of its kind every ``[conductor]
sweep_interval`` s, in a daemon thread, the first one an interval after
start (a conductor that just started resumes its own flows first):

* a super conductor (kind ``boot``): ``orphans.OrphanBuildRequests``,
  then ``unfinished_deletes.UnfinishedDeletes``, then
  ``pool_orphans.PoolOrphans`` (shares of the shared pools whose
  server is deleted, in ERROR or gone), then
  ``unplaced_allocations.UnplacedAllocations`` (allocation requests a
  dead process left unsettled), then ``handbacks.HandedBack`` (builds a
  cell handed back whose cast was lost: their moves are started);
* a cell conductor (kind ``reschedule``):
  ``unowned_flows.UnownedFlows`` (reschedule flows of its cell that
  nobody runs are handed over), then ``abandoned_flows.AbandonedFlows``
  (the instances of reschedule flows an operator abandoned end in
  ERROR), then ``build_timeouts.BuildTimeouts``
  (which leaves alone the instances of unfinished reschedule flows: the
  first check makes sure that such flows do finish), then
  ``stray_claims.StrayClaims`` (claims a late or repeated message re-made
  for an instance that went ACTIVE on another host).

Every check has ``sweep_once(context)``, which returns what it did (a
dict of counts), so that tests call it directly. Checks are idempotent
and safe with several conductors sweeping at once: what they start is
started through the same idempotent paths as a cast, and what they
settle is settled by a conditional update.
"""

from oslo_log import log as logging

from cellboot.compute import registration
from cellboot.conductor import abandoned_flows
from cellboot.conductor import build_timeouts
from cellboot.conductor import handbacks
from cellboot.conductor import orphans
from cellboot.conductor import pool_orphans
from cellboot.conductor import stray_claims
from cellboot.conductor import unfinished_deletes
from cellboot.conductor import unowned_flows
from cellboot.conductor import unplaced_allocations
from cellboot.conf import CONF
from cellboot.db import outage as db_outage
from cellboot.flowrun import kinds

LOG = logging.getLogger(__name__)


class Sweeper:
    """Runs ``checks`` every ``interval`` s in a daemon thread.

    The thread is the compute hosts' heartbeat thread, which has the
    same needs (a first run one interval after start, a stop that waits
    for a run under way). A check that fails is logged and tried again
    at the next sweep: a database that is down now may be back then,
    and the conductor must not lose its checks to it.
    """

    def __init__(self, checks, interval, name):
        self.checks = list(checks)
        self.interval = interval
        self.name = name
        self._thread = registration.Heartbeat(self.sweep_once, interval,
                                              name)

    def start(self):
        self._thread.start()
        return self

    def sweep_once(self, context):
        """Run every check once; their results, by check name."""
        results = {}
        for check in self.checks:
            name = type(check).__name__
            try:
                results[name] = done = check.sweep_once(context)
            except Exception as exc:
                db_outage.log_failure(
                    LOG, exc, '%s: check %s failed; trying again in %s s',
                    self.name, name, self.interval)
                continue
            if done and any(done.values()):
                LOG.info('%s: %s %s', self.name, name,
                         ', '.join(f'{key}={value}'
                                   for key, value in sorted(done.items())))
        return results

    def stop(self):
        """Stop sweeping; returns once a sweep under way has ended."""
        self._thread.stop()


def checks_for(manager):
    """The checks of a conductor manager's kind (see the module doc)."""
    if manager.KIND == kinds.KIND_BOOT:
        return [orphans.OrphanBuildRequests(manager),
                unfinished_deletes.UnfinishedDeletes(manager),
                pool_orphans.PoolOrphans(manager),
                unplaced_allocations.UnplacedAllocations(manager),
                handbacks.HandedBack(manager)]
    return [unowned_flows.UnownedFlows(manager),
            abandoned_flows.AbandonedFlows(manager),
            build_timeouts.BuildTimeouts(manager),
            stray_claims.StrayClaims(manager)]


def start_for(manager):
    """Start ``manager``'s checks; the running Sweeper (has ``stop()``)."""
    return Sweeper(checks_for(manager), CONF.conductor.sweep_interval,
                   f'{manager.KIND} conductor sweeper').start()
