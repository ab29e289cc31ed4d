"""The scheduler: where each new server goes, and the claim that holds it.

Two levels share this package. Each cell schedules its own hosts:
``resources`` owns the resource tables of the cell's database (providers,
inventories, allocations) and the atomic claims against them; a cell's
scheduler keeps the cell's hosts in memory (``host_state_cache``),
narrows them with filters (``filters``), orders them with weighers
(``weighers``), claims the best (``manager``) and publishes the cell's
aggregate (``aggregate``); ``api.CellScheduler`` is the facade the cell's
services and the API level call. The API level holds no host: it picks
cells by their aggregates (``cell_aggregates``, ``cell_filters``,
``routing``) and asks their schedulers (``cell_clients``) in
``cells.CellsScheduler``.
"""
