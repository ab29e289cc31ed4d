"""Conductors: the super conductor (API level) and the cell conductors.

``rpcapi`` is the client side of both RPC interfaces; the endpoints that
run the boot and reschedule flows are in ``manager``.
"""
