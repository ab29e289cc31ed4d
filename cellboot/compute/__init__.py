"""Compute hosts: the agent of one host in one cell, and its virt drivers.

``rpcapi`` is the client the conductors use to cast builds to a host.
"""
