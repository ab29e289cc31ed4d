"""``cellboot all-in-one``: a whole deployment in one process.

``deployment`` composes the services (databases, cells, scheduler,
conductors, compute hosts, API), the only composition of a whole
deployment in a process; ``hooks`` is what its other users (the
functional tests' cluster, the e2e benchmark) may change of it;
``demo`` boots servers through the REST API and reports where they
landed.
"""
