"""Unfinished flows that nobody runs: given back with ``hand_over``.

A conductor that dies between saving a flow and posting its job (with
a jobboard), or while it runs the flow (without one), leaves the flow
unfinished with nobody to finish it: no job references it, and no live
process owns it. This holds for both kinds of flows: boot flows in the
flow database (the super conductors' orphan sweep,
``cellboot.conductor.orphans``) and reschedule flows in a cell's
database (the cell conductors' sweep, ``UnownedFlows`` below). A cell's
unfinished reschedule flow matters twice: besides its own work, the
BUILD-timeout check leaves its instance alone while it is unfinished,
so such an instance would stay in BUILD for ever.

``hand_over_unowned`` finds the manager's flows of its kind unfinished
and owned (``owned_since``, else ``started_at``; see
``summaries.ownership``) since before the cutoff that nobody runs:

* with a jobboard, those that no job on the manager's board references;
* without, those of this host whose owner process is gone (or is this
  process: ``hand_over`` knows whether it runs the flow now). Another
  live process of this host has its own flows in hand; another host's
  flows are that host's conductors' to resume when they start
  (``cellboot.flowrun.owners``, the predicate the operator's ``flows
  retry`` uses too).

Each is given to the manager's ``runner.hand_over``, which is
idempotent: with a jobboard it posts the flow's one job only if the
board has none (two conductors sweeping at once post one job), without
one it resumes the flow in a thread unless this process runs it
already.
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from cellboot.conductor import sweep_lock
from cellboot.conf import CONF
from cellboot.flowrun import jobboard
from cellboot.flowrun import owners
from cellboot.flowrun import records

LOG = logging.getLogger(__name__)


def hand_over_unowned(manager, cutoff, sweep):
    """Give ``hand_over`` the flows nobody runs (module doc); how many.

    ``cutoff`` is a naive UTC datetime, as the sweeps compute it;
    ``sweep`` (``sweep_lock.Sweep``) says whether to go on before each
    flow.
    """
    handed = 0
    for flow in _unowned(manager, cutoff):
        if not sweep.go_on():
            break
        if manager.runner.hand_over(flow['uuid']) is False:
            continue
        handed += 1
        LOG.info('%s flow %s (owner %s, %s since %s) was unfinished and '
                 'nobody ran it: handed over', manager.KIND.capitalize(),
                 flow['uuid'], flow['owner'], flow['state'],
                 flow['since'].isoformat())
    return handed


def _unowned(manager, cutoff):
    """The old unfinished flows of ``manager``'s kind nobody runs."""
    cutoff = cutoff.replace(tzinfo=datetime.timezone.utc)
    flows = [flow for flow in records.unfinished(manager.persistence(),
                                                 manager.KIND, manager.LEVEL)
             if flow['since'] is not None and flow['since'] < cutoff]
    if not flows:
        return []
    if manager.runner.board is None:
        return [flow for flow in flows
                if owners.orphaned_here(flow['owner'])]
    # One read of the board for the sweep; ``hand_over`` reads it again
    # for each flow it is given.
    referenced = jobboard.referenced_flow_uuids(manager.runner.board)
    return [flow for flow in flows if flow['uuid'] not in referenced]


class UnownedFlows:
    """The cell conductors' check: their cell's reschedule flows.

    ``manager`` is a cell conductor manager (``KIND``, ``LEVEL``,
    ``cell_name``, ``persistence()``, ``board``, ``hand_over``). With a
    jobboard, one conductor of the cell sweeps at a time, under the
    cell's sweep lock (``sweep_lock``); ``hand_over`` is idempotent
    anyway. Without one only this host's dead processes' flows are
    taken, and there is no lock. The sweep's time budget bounds one
    sweep.
    """

    def __init__(self, manager):
        self.manager = manager
        self._locks = None

    def sweep_once(self, context):
        """``{'handed_over': flows}``; {} when flows are not persisted or
        another conductor of the cell sweeps."""
        if self.manager.persistence() is None:
            return {}
        if self._locks is None:
            self._locks = sweep_lock.Locks(cell_name=self.manager.cell_name)
        sweep = sweep_lock.Sweep(self._locks.lock(self.manager.runner.board))
        if not sweep.start():
            return {}
        try:
            timeout = CONF.conductor.orphan_build_request_timeout
            cutoff = timeutils.utcnow() - datetime.timedelta(seconds=timeout)
            return {'handed_over': hand_over_unowned(self.manager, cutoff,
                                                     sweep)}
        finally:
            sweep.end()
