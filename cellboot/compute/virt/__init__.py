"""Virt drivers: how a compute host builds servers on its hypervisor.

``driver`` defines the interface and loads the configured driver;
``fake`` is the driver that builds nothing, used by the embedded mode,
the tests and the benchmarks.
"""
