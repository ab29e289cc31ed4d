"""Shared resource pools: providers that are not hosts.

A pool (a shared storage pool giving ``DISK_GB``, a public address pool
giving ``CUSTOM_PUBLIC_IPV4``) is a resource provider of the API
database (``resource_providers.is_pool``), with inventories, traits and
scopes: the cells and zones it serves. Every host of a served cell (or
of a cell below a served zone) may draw from it. The API level's
scheduler owns the pools; a cell's scheduler never hears of them.

* ``records`` -- create, list, show, update and delete pools;
* ``scopes`` -- reading the cells and zones a pool serves;
* ``claims`` -- claiming and releasing a consumer's share of a pool,
  with the same code as a host claim (``scheduler.resources.claims`` on
  the API store);
* ``view`` -- the pools as the API-level scheduler sees them, read
  again at most every few seconds, and the choice of a pool for a cell.
"""
