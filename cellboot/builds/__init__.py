"""How builds and servers end: domain services below the flows.

A build ends short of ACTIVE not only inside a flow: a compute host that
restarts finds builds it will never finish, and the conductors' sweeps
find builds that timed out or whose flow ended without settling them. So
what ends a build (``fates``: bury in cell0, fail in its cell, settle,
end in ERROR), what gives its claims back (``claims``) and the steps of
a server's delete (``deletes``, used by the API and the sweeps) live
here, where compute, the conductors and the flows all import them
downward. Nothing here imports the flows, the conductors or compute.
"""
