"""TaskFlow flows of cellboot's conductors.

* ``boot`` — run by the super conductor for one request: schedule once,
  then put every instance of the request in its cell and cast it to its
  compute host (DESIGN §4).
* ``reschedule`` — run by a cell conductor when a compute host gave a
  build back: walk the remaining alternates of the cell.

Flow factories are module-level functions (``get_flow``), registered by
kind in ``kinds``: a persisted flow is rebuilt from its kind's factory,
never from a name stored with it. Tasks live in ``tasks/``; what
happens to an instance that will not be built (cell0, ERROR in its cell,
the owner's delete) is in ``cellboot.builds.fates``, below the flows,
since compute hosts and conductors end builds too; ``engine`` is the one
place that loads and runs flows.
"""
