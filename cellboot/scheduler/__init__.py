"""The scheduler: where each new server goes, and the claim that holds it.

Two halves share this package. ``resources`` owns the resource tables of
the API database (providers, inventories, allocations) and the atomic
claims against them. The rest keeps every enabled cell's hosts in memory
(``host_state``), narrows them with filters (``filters``), orders them
with weighers (``weighers``) and claims the best (``manager``);
``api.SchedulerAPI`` is the facade other services call.
"""
