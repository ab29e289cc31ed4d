"""TaskFlow flows of cellboot's conductors, on TaskFlow's public API.

* ``boot`` — run by the super conductor for one request: schedule once,
  then put every instance of the request in its cell and cast it to its
  compute host.
* ``reschedule`` — run by a cell conductor when a compute host gave a
  build back: walk the remaining alternates of the cell.

Flow factories are module-level functions (``get_flow``), registered by
kind in ``cellboot.flowrun.kinds``: a persisted flow is rebuilt from its
kind's factory, never from a name stored with it. Tasks live in
``tasks/``; what happens to an instance that will not be built (cell0,
ERROR in its cell, the owner's delete) is in ``cellboot.builds.fates``,
below the flows, since compute hosts and conductors end builds too.
Flows and tasks use TaskFlow's tasks, retries, patterns, states,
exceptions and failures only; running them (engines, persistence,
jobboards) is ``cellboot.flowrun``'s business, and its runner the one
way to run one.
"""
