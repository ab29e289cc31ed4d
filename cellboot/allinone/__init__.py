"""``cellboot all-in-one``: a whole deployment in one process.

``deployment`` composes the services (databases, cells, scheduler,
conductors, compute hosts, API); ``demo`` boots servers through the REST
API and reports where they landed.
"""
