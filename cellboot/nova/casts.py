"""What nova-api's ``schedule_and_build_instances`` asks, in cellboot's terms.

nova-api 34 casts, for every ``POST /servers``, one
``schedule_and_build_instances`` (namespace ``compute_task``, version
1.17) whose arguments are Nova's objects as primitives
(``cellboot.nova.primitives``): one ``BuildRequest`` (its ``Instance``
inside) and one ``RequestSpec`` per instance, the image as a plain
dict, the admin password in clear, and the networks, block device
mappings and tags of the request. ``parse`` checks all of it against
the schemas below and returns a ``NovaBoot``: the request as cellboot's
own API would have described it (one flavor, image, zone, hints and
reservation for every instance; each instance's uuid, name, index and
metadata), plus what of the request cellboot cannot honour
(``unsupported``), which the door turns into an ERROR with a fault for
each instance instead of dropping it silently.

The admin password, injected files and the context's auth token are
read by nobody here: a ``NovaBoot`` does not hold them, so they cannot
be logged or stored by what comes after.
"""

import dataclasses
import json

from cellboot.nova import primitives as p

# Where nova-api 34 sends it: ComputeTaskAPI's client has no version cap
# and asks 1.17 of this method.
EXCHANGE = 'nova'
TOPIC = 'conductor'
NAMESPACE = 'compute_task'
METHOD = 'schedule_and_build_instances'
VERSION = '1.17'

# A multi-create larger than this is refused as malformed: nova-api's own
# quota stops far below it in any real cloud.
MAX_INSTANCES = 1000

SOFT_AFFINITY = 'soft-affinity and soft-anti-affinity policies'

# Hints cellboot's scheduler reads, from a Nova request: ``target_cell``
# is left out (Nova has no such hint, and cellboot's policy on it is
# enforced by cellboot's API, which a Nova request never went through).
HINTS = ('same_host', 'different_host')

FLAVOR = p.envelope('Flavor', 1, {
    'flavorid': p.text(255), 'name': p.text(255),
    'vcpus': p.integer(), 'memory_mb': p.integer(), 'root_gb': p.integer(),
    'ephemeral_gb': p.integer(null=True), 'swap': p.integer(null=True),
    'extra_specs': p.mapping(p.text(255), null=True),
}, required=['flavorid', 'name', 'vcpus', 'memory_mb', 'root_gb'])

_PCI_REQUESTS = p.envelope('InstancePCIRequests', 1, {
    'requests': p.array({'type': 'object'}, 64)}, null=True)

TAGS = p.object_list('TagList', p.envelope('Tag', 1, {
    'tag': p.text(60)}, required=['tag']), max_items=50, null=True)

_BLOCK_DEVICES = p.object_list('BlockDeviceMappingList', p.envelope(
    'BlockDeviceMapping', 1, {
        'source_type': p.text(255, null=True),
        'destination_type': p.text(255, null=True),
        'volume_id': p.text(255, null=True),
    }), max_items=256, null=True)

_NETWORKS = p.object_list('NetworkRequestList', p.envelope(
    'NetworkRequest', 1, {
        'network_id': p.text(255, null=True),
        'port_id': p.text(255, null=True),
    }), max_items=256, null=True)

_INSTANCE = p.envelope('Instance', 2, {
    'uuid': p.UUID,
    'display_name': p.text(255, null=True),
    'reservation_id': p.text(255),
    'launch_index': p.integer(null=True),
    'project_id': p.text(255),
    'user_id': p.text(255),
    'image_ref': p.text(255, null=True),
    'availability_zone': p.text(255, null=True),
    'metadata': p.mapping(p.text(255), max_items=128, null=True),
    'flavor': FLAVOR,
    'pci_requests': _PCI_REQUESTS,
    'numa_topology': {'type': ['object', 'null']},
}, required=['uuid', 'reservation_id', 'project_id', 'user_id', 'flavor'])

_BUILD_REQUEST = p.envelope('BuildRequest', 1, {
    'instance_uuid': p.UUID,
    'project_id': p.text(255),
    'instance': _INSTANCE,
    'block_device_mappings': _BLOCK_DEVICES,
    'tags': TAGS,
}, required=['instance_uuid', 'project_id', 'instance'])

_GROUP = p.envelope('InstanceGroup', 1, {
    'uuid': p.UUID,
    'name': p.text(255, null=True),
    'project_id': p.text(255, null=True),
    'policy': p.text(255, null=True),
    'policies': p.array(p.text(255), 16, null=True),
}, required=['uuid'], null=True)

_REQUEST_SPEC = p.envelope('RequestSpec', 1, {
    'instance_uuid': p.UUID,
    'num_instances': p.integer(1, MAX_INSTANCES),
    'scheduler_hints': p.mapping(p.array(p.text(255), 64), 64, null=True),
    'availability_zone': p.text(255, null=True),
    'instance_group': _GROUP,
    'force_hosts': p.array(p.text(255), 64, null=True),
    'force_nodes': p.array(p.text(255), 64, null=True),
    'requested_destination': {'type': ['object', 'null']},
    'pci_requests': _PCI_REQUESTS,
    'numa_topology': {'type': ['object', 'null']},
}, required=['instance_uuid', 'num_instances'])

ARGUMENTS = {
    'type': 'object',
    'properties': {
        'build_requests': dict(p.array(_BUILD_REQUEST, MAX_INSTANCES),
                               minItems=1),
        'request_specs': dict(p.array(_REQUEST_SPEC, MAX_INSTANCES),
                              minItems=1),
        'image': {'type': ['object', 'null']},
        'requested_networks': _NETWORKS,
        'block_device_mapping': _BLOCK_DEVICES,
        'tags': TAGS,
    },
    'required': ['build_requests', 'request_specs'],
}


@dataclasses.dataclass(frozen=True)
class NovaInstance:
    uuid: str
    name: str
    launch_index: int
    metadata: dict


@dataclasses.dataclass(frozen=True)
class NovaBoot:
    """One ``POST /servers`` of nova-api, as cellboot builds it."""

    reservation_id: str
    project_id: str
    user_id: str
    flavor: dict
    image_ref: str
    availability_zone: str
    hints: dict
    group: dict
    instances: tuple
    unsupported: tuple
    ignored_hints: tuple = ()

    @property
    def uuids(self):
        return [instance.uuid for instance in self.instances]


def _same(values, what):
    if len(set(values)) != 1:
        raise p.Malformed(f'the instances of one request differ in {what}')
    return values[0]


def _flavor(instance):
    """cellboot's flavor dict; ``extra_specs`` (checked by ``FLAVOR``:
    short texts, bounded in number) pass through for the scheduler,
    which reads ``resources:*`` and ``trait:*`` among them."""
    flavor = p.data(instance['flavor'])
    return {'flavorid': flavor['flavorid'], 'name': flavor['name'],
            'vcpus': flavor['vcpus'], 'memory_mb': flavor['memory_mb'],
            'root_gb': flavor['root_gb'],
            'extra_specs': dict(flavor.get('extra_specs') or {})}


def _instances(build_requests, specs):
    """(instance fields, spec fields) per instance, checked in pairs."""
    if len(build_requests) != len(specs):
        raise p.Malformed(f'{len(build_requests)} build requests but '
                          f'{len(specs)} request specs')
    pairs = []
    for request, spec in zip(build_requests, specs):
        request, spec = p.data(request), p.data(spec)
        instance = p.data(request['instance'])
        uuid = request['instance_uuid']
        if instance['uuid'] != uuid or spec['instance_uuid'] != uuid:
            raise p.Malformed(f'build request {uuid} holds instance '
                              f'{instance["uuid"]} and is paired with the '
                              f'request spec of {spec["instance_uuid"]}')
        if instance['project_id'] != request['project_id']:
            raise p.Malformed(f'instance {uuid} is of project '
                              f'{instance["project_id"]} but its build '
                              f'request of {request["project_id"]}')
        pairs.append((instance, spec))
    uuids = [instance['uuid'].lower() for instance, _spec in pairs]
    if len(set(uuids)) != len(uuids):
        raise p.Malformed('an instance uuid appears twice')
    return pairs


def _unsupported(args, pairs):
    """Why cellboot cannot build this request as asked (may be empty)."""
    reasons = []
    devices = p.items(args.get('block_device_mapping'))
    if any(device.get('destination_type') == 'volume'
           or device.get('source_type') in ('volume', 'snapshot')
           for device in devices):
        reasons.append('volumes (block device mappings beyond the image)')
    networks = p.items(args.get('requested_networks'))
    if any(network.get('port_id') or network.get('network_id') not in (
            None, 'none', 'auto') for network in networks):
        reasons.append('requested ports or networks (cellboot manages '
                       'no networks)')
    for instance, spec in pairs:
        if (spec.get('force_hosts') or spec.get('force_nodes')
                or spec.get('requested_destination')):
            reasons.append('forced hosts or nodes')
        pci = (p.data(spec.get('pci_requests')).get('requests') or
               p.data(instance.get('pci_requests')).get('requests'))
        if pci or spec.get('numa_topology') or instance.get(
                'numa_topology'):
            reasons.append('PCI or NUMA requests')
        group = p.data(spec.get('instance_group'))
        policies = [group.get('policy')] + list(group.get('policies') or [])
        if any(policy and policy.startswith('soft-')
               for policy in policies):
            reasons.append(SOFT_AFFINITY)
    return tuple(dict.fromkeys(reasons))


def _hints(spec):
    """(cellboot's hints, the names of those cellboot does not read)."""
    given = spec.get('scheduler_hints') or {}
    hints = {name: list(given[name]) for name in HINTS if given.get(name)}
    ignored = tuple(sorted(name for name in given
                           if name not in HINTS and name != 'group'))
    return hints, ignored


def _group(spec):
    group = p.data(spec.get('instance_group'))
    if not group:
        return None
    policy = group.get('policy') or next(iter(group.get('policies') or []),
                                         None)
    return {'uuid': group['uuid'], 'policy': policy,
            'name': group.get('name'), 'project_id': group.get('project_id')}


def parse(args):
    """A ``NovaBoot`` from the cast's keyword arguments.

    Raises ``primitives.Malformed`` when they are not what nova-api 34
    sends (a wrong shape, a field too long, instances that disagree).
    """
    p.validate(args, ARGUMENTS, 'schedule_and_build_instances')
    pairs = _instances(args['build_requests'], args['request_specs'])
    instances = [instance for instance, _spec in pairs]
    first_spec = pairs[0][1]
    hints, ignored = _hints(first_spec)
    flavors = [_flavor(instance) for instance in instances]
    _same([json.dumps(flavor, sort_keys=True) for flavor in flavors],
          'flavor')
    return NovaBoot(
        reservation_id=_same([i['reservation_id'] for i in instances],
                             'reservation'),
        project_id=_same([i['project_id'] for i in instances], 'project'),
        user_id=_same([i['user_id'] for i in instances], 'user'),
        flavor=flavors[0],
        image_ref=_same([i.get('image_ref') for i in instances], 'image'),
        availability_zone=(first_spec.get('availability_zone')
                           or instances[0].get('availability_zone')),
        hints=hints,
        group=_group(first_spec),
        instances=tuple(NovaInstance(
            uuid=i['uuid'], name=i.get('display_name') or '',
            launch_index=i.get('launch_index') or 0,
            metadata=dict(i.get('metadata') or {})) for i in instances),
        unsupported=_unsupported(args, pairs),
        ignored_hints=ignored)
