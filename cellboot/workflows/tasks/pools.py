"""``claim-pool``: each instance's share of the shared pools.

The API level's scheduler chose, with each instance's host, what the
shared pools must give it (``selection['pools']``, see
``cellboot.scheduler.pools.view``): what no host of the chosen cell
provides. This atom, right after ``schedule``, claims it through the
scheduler (``claim_pools``, in-process or over RPC), consumer = the
instance uuid. Both claims succeed or neither stays: when no pool
can give an instance its share, the atom fails, its revert gives back
every pool claim of the request, and ``schedule``'s revert buries the
instances in cell0 with the failure (a NoValidHost naming the class),
which releases their host claims.
"""

from taskflow import task

from cellboot.workflows import tasks


def _entries(hosts):
    return (hosts[0].get('pools') or []) if hosts else []


class ClaimPool(task.Task):
    """Claim every instance's pool share; provides ``{instance uuid:
    [{'uuid': pool uuid, 'resources': {rc: amount}}]}`` for the
    instances that needed any (persisted: what the flow holds)."""

    default_provides = 'pool_claims'
    # Run again on resumption, it keeps the share claimed before
    # (``replay``) and nothing after it reads its result
    # (``cellboot.flowrun.storage``: no flush of its own).
    rerun_safe = True

    def execute(self, context, scheduler, selections, resumed=False,
                fence=None):
        held = {}
        for uuid, hosts in selections.items():
            entries = _entries(hosts)
            if not entries:
                continue
            tasks.check_fence(fence)
            # Resumed: a dead run may have claimed already, perhaps on
            # an alternate pool; that share is kept, not doubled.
            held[uuid] = scheduler.claim_pools(context, uuid, entries,
                                               replay=resumed)
        return held

    def revert(self, context, scheduler, selections, **kwargs):
        tasks.revert_each(
            [uuid for uuid, hosts in selections.items() if _entries(hosts)],
            lambda uuid: scheduler.release_pools(context, uuid),
            'release the pool claims')
