"""The scheduler's resource tables: providers, inventories, claims.

Only the scheduler writes ``resource_providers``, ``inventories`` and
``allocations``; everything else reaches them through the scheduler's API
(in-process or over RPC), which calls the modules of this package:

* ``providers`` -- create, update, read and delete a provider and its
  inventories (what a compute host reports);
* ``claims`` -- atomic claims and releases of a consumer's allocations;
* ``usage`` -- reads: usages, inventories, a consumer's allocations, and
  the bulk snapshot the host states load from;
* ``inventory`` -- the capacity rules shared by all of them;
* ``contention`` -- generations, database retries and their counters.
"""
