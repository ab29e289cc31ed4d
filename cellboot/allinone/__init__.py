"""``cellboot all-in-one``: a whole deployment in one process.

``deployment`` composes the services (databases, cells, scheduler,
conductors, compute hosts, API), the only composition of a whole
deployment in a process; ``hooks`` is what its other users (the
functional tests' cluster, the e2e benchmark) may change of it;
``demo`` boots servers through the REST API and reports where they
landed; ``startup`` is what the command checks and prepares before it
creates anything (the port, the state directory, the log file);
``cell_compute`` is a compute host of one cell among several.
"""
