"""Whether anybody runs a saved flow: the one predicate for it.

A flow that ended is run by nobody. An unfinished one is run by:

* with a jobboard (``[jobboard] backend = redis``): whoever a job on
  its kind's board that names it belongs to. A job claimed by a live
  conductor is renewed while the flow runs; a dead conductor's claim
  runs out and the job goes to another conductor; an unclaimed job is
  about to be claimed. A flow that no job names is run by nobody;
* without one: the process its meta names as ``owner`` (``HOST:PID``),
  which only that host can see alive. This host's flow whose process
  is gone, or that names no process (a bare host: handed back), is run
  by nobody; another host's is that host's conductors' to resume.

The conductors' sweep of unowned flows (``cellboot.conductor.
unowned_flows``) and the operator's actions on a flow
(``cellboot.flowrun.retrying``) both decide with these functions, so
that what an operator may take is exactly what a sweeper would.
"""

import os

from cellboot.conf import CONF
from cellboot.flowrun import jobboard


def orphaned_here(owner):
    """Without a jobboard: whether a flow of ``owner`` is this host's
    and no live process of this host has it (this process's own flows
    count as orphaned: its runner knows whether it runs them)."""
    host, _sep, pid = (owner or '').rpartition(':')
    if not pid.isdigit():
        host, pid = owner, None
    if host != CONF.host:
        return False
    if pid is None or int(pid) == os.getpid():
        return True
    return not alive(int(pid))


def alive(pid):
    """Whether process ``pid`` of this host exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def board_holder(board, flow_uuid):
    """With a jobboard: ``(True, holder)`` when a job on ``board`` names
    ``flow_uuid`` (``holder``: the conductor holding its claim, None
    when nobody claimed it yet), else ``(False, None)``."""
    for job in board.iterjobs():
        if jobboard.job_flow_uuid(job, board.kind) == flow_uuid:
            return True, board.holder(job)
    return False, None
