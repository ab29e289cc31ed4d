"""The scheduler's resource tables: providers, inventories, claims.

Only a cell's schedulers write its ``resource_providers``,
``inventories`` and ``allocations``, tables of the cell's own database
(``tables``); everything else reaches them through the cell scheduler's
API (in-process or over RPC on the cell's bus), which calls the modules
of this package:

* ``providers`` -- create, update, read and delete a provider and its
  inventories (what a compute host reports);
* ``claims`` -- atomic claims and releases of a consumer's allocations;
* ``usage`` -- reads: usages, inventories, a consumer's allocations, and
  the bulk snapshot the host states load from;
* ``inventory`` -- the capacity rules shared by all of them;
* ``contention`` -- generations, database retries and their counters;
* ``tables`` -- which database and tables all of them use.
"""
