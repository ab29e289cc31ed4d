"""Making a compute host known: its service, its node, its inventory.

A host registers at every start, so each step finds what an earlier start
left and brings it up to date instead of adding to it: one service row,
one compute node row whose uuid never changes (it is also the resource
provider's uuid in the scheduler, which holds the host's allocations),
capacity and ratios as configured now. Two agents started with the same
host name at once end up sharing the rows rather than failing.
"""

import threading

from oslo_log import log as logging

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db import outage as db_outage
from cellboot import exception
from cellboot.objects import compute_node
from cellboot.objects import service as service_obj
from cellboot.scheduler import host_state_cache
from cellboot.scheduler.resources import classes
from cellboot.scheduler.resources import inventory as inventory_rules
from cellboot.scheduler.resources import provider_traits

LOG = logging.getLogger(__name__)

# The binary the scheduler's ComputeFilter looks for in the services.
BINARY = host_state_cache.COMPUTE_BINARY


def register_service(context, host):
    """The host's compute service row, created if missing."""
    try:
        return service_obj.Service.get_by_host_and_binary(context, host,
                                                          BINARY)
    except exception.ServiceNotFound:
        pass
    try:
        return service_obj.Service.create(context, host, BINARY)
    except exception.ServiceExists:
        # Another agent with our name registered it just now.
        return service_obj.Service.get_by_host_and_binary(context, host,
                                                          BINARY)


def register_node(context, host, resources):
    """The host's compute node, created or updated to ``resources``.

    ``resources`` is the driver's ``get_available_resource()``; the
    allocation ratios come from ``[compute]``.
    """
    nodename = resources['hypervisor_hostname']
    values = {'vcpus': resources['vcpus'],
              'memory_mb': resources['memory_mb'],
              'local_gb': resources['local_gb'],
              'cpu_allocation_ratio': CONF.compute.cpu_allocation_ratio,
              'ram_allocation_ratio': CONF.compute.ram_allocation_ratio,
              'disk_allocation_ratio': CONF.compute.disk_allocation_ratio}
    try:
        node = compute_node.ComputeNode.get_by_host_and_node(
            context, host, nodename)
    except exception.ComputeNodeNotFound:
        try:
            node = compute_node.ComputeNode.create(context, host, nodename,
                                                   **values)
            LOG.info('Registered compute node %s (%s) of host %s',
                     nodename, node.uuid, host)
            return node
        except exception.ComputeNodeExists:
            node = compute_node.ComputeNode.get_by_host_and_node(
                context, host, nodename)
    changed = {name: value for name, value in values.items()
               if getattr(node, name) != value}
    if changed:
        LOG.info('Compute node %s of host %s changed: %s', nodename, host,
                 changed)
        node.update(context, **changed)
    return node


def _config_error(option, reason):
    return exception.ConfigurationError(
        reason=f'[compute] {option}: {reason}')


def extra_inventories():
    """``[compute] extra_inventories`` as inventories (``{rc: {'total':
    n}}``); ConfigurationError naming the entry at fault.

    The node's own classes come from its driver: configuring them here
    would report two figures for one class.
    """
    result = {}
    for entry in CONF.compute.extra_inventories:
        rc, sep, total = entry.strip().partition(':')
        if not sep:
            raise _config_error('extra_inventories',
                                f'{entry[:80]!r} is not CLASS:TOTAL')
        try:
            classes.check(rc)
        except exception.Invalid as exc:
            raise _config_error('extra_inventories', exc.kwargs['reason'])
        if rc in inventory_rules.FLAVOR_CLASSES or rc in result:
            raise _config_error(
                'extra_inventories',
                f'{rc} is given twice (VCPU, MEMORY_MB and DISK_GB come '
                f'from the driver)')
        if not (total.isascii() and total.isdigit()) \
                or not 1 <= int(total) <= inventory_rules.MAX_AMOUNT:
            raise _config_error(
                'extra_inventories',
                f'the total of {rc} must be a whole number from 1 to '
                f'{inventory_rules.MAX_AMOUNT}, not {total[:20]!r}')
        result[rc] = {'total': int(total)}
    return result


def configured_traits():
    """``[compute] traits``, sorted; ConfigurationError for a bad name.

    None when the option is unset (or empty): the host's report then
    leaves its traits as they are, so that those an operator set
    (``cellboot-manage provider trait``, ``PUT /os-resource-providers/
    {uuid}/traits``) persist. A host that sets the option owns its set:
    each report replaces it.
    """
    if not CONF.compute.traits:
        return None
    try:
        return provider_traits.normalize(
            [trait.strip() for trait in CONF.compute.traits])
    except exception.Invalid as exc:
        raise _config_error('traits', exc.kwargs['reason'])


def check_configuration():
    """Check the options above when the service starts, so that a typo
    stops it with a clear message rather than at its first report."""
    extra_inventories()
    configured_traits()


def inventories(node):
    """A compute node's capacity as the scheduler's inventories, with
    the ``[compute] extra_inventories``.

    A node without local disk reports no DISK_GB at all, rather than a
    total of 0, which the scheduler would refuse.
    """
    result = {
        'VCPU': {'total': node.vcpus,
                 'allocation_ratio': node.cpu_allocation_ratio},
        'MEMORY_MB': {'total': node.memory_mb,
                      'allocation_ratio': node.ram_allocation_ratio},
    }
    if node.local_gb:
        result['DISK_GB'] = {'total': node.local_gb,
                             'allocation_ratio': node.disk_allocation_ratio}
    result.update(extra_inventories())
    return result


class Heartbeat:
    """Calls ``beat(context)`` every ``interval`` s in a daemon thread.

    A beat that fails is logged and the next one tried: a database that
    is down now may be back at the next beat (the scheduler sees the host
    as down meanwhile), and the agent must not die of it.
    """

    def __init__(self, beat, interval, name):
        self._beat = beat
        self._interval = interval
        self._name = name
        self._stopping = threading.Event()
        self._thread = None

    def start(self):
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name=self._name,
                                        daemon=True)
        self._thread.start()

    def _run(self):
        context = cb_context.get_admin_context()
        while not self._stopping.wait(self._interval):
            try:
                self._beat(context)
            except Exception as exc:
                db_outage.log_failure(LOG, exc,
                                      '%s failed; trying again in %s s',
                                      self._name, self._interval)

    def stop(self):
        """Stop beating; returns once the thread is gone."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
