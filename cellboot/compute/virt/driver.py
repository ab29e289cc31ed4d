"""The virt driver interface, and loading the one ``[compute] driver`` names.

The compute manager owns the workflow of a build (claims, instance
states, faults, reschedules); a driver only knows its hypervisor. The
interface is therefore small: what the host has (reported to the
scheduler as a resource provider), build a server, remove one. A driver
tells the manager what a failure means by its exception class:
``RescheduledBuildFailure`` (this host could not, another may: the cell
conductor tries an alternate) or ``BuildAbortedFailure`` (no host can:
the instance goes to ERROR).
"""

import abc

from oslo_utils import importutils

from cellboot import exception

# Short names an operator can put in [compute] driver.
DRIVERS = {
    'fake': 'cellboot.compute.virt.fake.FakeDriver',
}


class ComputeDriver(abc.ABC):
    """A hypervisor on one compute host."""

    def __init__(self, host):
        self.host = host

    @abc.abstractmethod
    def get_available_resource(self):
        """The host's node and its capacity.

        Returns ``{'hypervisor_hostname': str, 'vcpus': int,
        'memory_mb': int, 'local_gb': int}``: totals, not free amounts
        (the scheduler keeps the usage).
        """

    @abc.abstractmethod
    def spawn(self, context, instance, flavor):
        """Build ``instance`` (an Instance) with ``flavor`` (a dict).

        Returns when the server runs. Raises RescheduledBuildFailure or
        BuildAbortedFailure; the manager treats any other exception as
        reschedulable, since a fault of this host is the likeliest cause.
        """

    @abc.abstractmethod
    def destroy(self, context, instance):
        """Remove ``instance`` from the host; a no-op if it is not there.

        Called after a failed build and when the instance was deleted
        while it was being built, so it must be idempotent.
        """

    def list_instances(self):
        """The uuids of the servers on the host (for operators, tests)."""
        return []


def load_driver(name, host):
    """The driver ``name`` (short name or dotted path) for ``host``.

    Raises ComputeDriverNotFound, a configuration error the command
    prints as one line.
    """
    path = DRIVERS.get(name, name)
    known = ', '.join(sorted(DRIVERS))
    if '.' not in path:
        raise exception.ComputeDriverNotFound(
            driver=name, known=known,
            reason='it is neither a known driver name nor a dotted path')
    try:
        driver_class = importutils.import_class(path)
    except (ImportError, ValueError, AttributeError) as exc:
        raise exception.ComputeDriverNotFound(
            driver=name, known=known, reason=f'cannot import it ({exc})')
    if not (isinstance(driver_class, type)
            and issubclass(driver_class, ComputeDriver)):
        raise exception.ComputeDriverNotFound(
            driver=name, known=known,
            reason='it is not a ComputeDriver subclass')
    return driver_class(host)
