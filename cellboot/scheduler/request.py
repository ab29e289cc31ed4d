"""What one ``select_destinations`` call asks for, read once per call.

The request spec is a plain, JSON-serializable dict (it is persisted in
``request_specs`` and travels over RPC)::

    {
        'flavor': {'vcpus': 2, 'memory_mb': 4096, 'root_gb': 20,
                   'flavorid': '...',
                   'extra_specs': {                  # optional
                       'resources:CUSTOM_FPGA': '1',  # add a class
                       'resources:DISK_GB': '0',      # drop one
                       'trait:HW_CPU_X86_AVX2': 'required',
                       'trait:CUSTOM_SLOW': 'forbidden'}},
        'num_instances': 1,
        'availability_zone': 'nova',      # or None: any zone
        'scheduler_hints': {
            'target_cell': CELL_UUID_OR_NAME,
            'same_host': [INSTANCE_UUID, ...],       # on a host of these
            'different_host': [INSTANCE_UUID, ...],  # on none of theirs
            'group': SERVER_GROUP_UUID,
            'zone': ZONE_NAME,     # a zone of the API level's tree
            'near': [UUID, ...],   # an allocation's or server's
            'far': [UUID, ...],
        },
        'project_id': '...', 'user_id': '...',
        'ignore_hosts': [SERVICE_HOST, ...],
        'instance_group': {'uuid': '...', 'policy': 'anti-affinity',
                           'members': [INSTANCE_UUID, ...],
                           'hosts': [SERVICE_HOST, ...]},   # optional
        # Read by the API level only (``routing``), for allocation
        # requests (``allocations``): the whole request on one host, no
        # class from a shared pool.
        'one_provider': True,
    }

Every key but ``flavor`` is optional. The flavor's ``extra_specs`` are
spelt as Nova's: ``resources:CLASS`` = a whole number adds a resource
class or overrides the amount the flavor's fields ask (0 drops it), any
standard or ``CUSTOM_`` class (``resources.classes``);
``trait:NAME`` = ``required`` or ``forbidden`` asks for hosts that have,
or have not, the trait (``resources.traits``); other keys are not the
scheduler's and are ignored. A hint may be a value or a list of
values (the REST API passes lists).

Both levels parse a spec with ``ScheduleRequest``. The API level
(``routing``) reads what only the API database knows -- which cell holds
each hinted instance and group member, whether they are the project's
own, the server group named by a ``group`` hint, the cell named by
``target_cell`` -- and sends each cell it asks a spec of its own: the
hints and members of that cell only, the group given whole as
``instance_group``, no ``target_cell``. A cell's scheduler then only
turns the hinted instances into the resource providers where they hold
allocations in its cell (``resolve``), so filters never touch a
database.

``same_host`` and ``different_host`` see only the servers of the
request's own project: another project's server is treated exactly as an
unknown uuid, so that the hints neither tell whether it exists nor put a
server next to another tenant's. ``target_cell`` is for administrators;
the API checks that by policy before the spec is written. ``zone``
names a zone of the API level's tree (``cellboot.scheduler.zones``); a
cell's scheduler is never sent it. ``near`` and ``far`` name the
project's allocations (``allocation_requests``) or servers: the API
level keeps the request in (or out of) the cells they are reached from
(``colocation``, which treats another project's uuid as unknown, as
``same_host`` does); a cell is sent neither hint, only
``preferred_providers``, the hosts of the allocations named ``near``
that its scheduler picks first when they pass its filters.
"""

from cellboot import exception
from cellboot.scheduler.resources import classes
from cellboot.scheduler.resources import inventory
from cellboot.scheduler.resources import traits as traits_mod
from cellboot.scheduler.resources import usage

FLAVOR_RESOURCES = (('vcpus', 'VCPU'), ('memory_mb', 'MEMORY_MB'),
                    ('root_gb', 'DISK_GB'))
RESOURCES_PREFIX = 'resources:'
TRAIT_PREFIX = 'trait:'
REQUIRED = 'required'
FORBIDDEN = 'forbidden'
GROUP_POLICIES = ('affinity', 'anti-affinity')
MAX_ZONE_NAME = 255
MAX_HINT_UUIDS = 64


def _as_list(value):
    if value is None:
        return []
    if isinstance(value, (list, tuple, set)):
        return [v for v in value if v]
    return [value]


def _as_one(value, hint):
    values = _as_list(value)
    if len(values) > 1:
        raise exception.Invalid(
            reason=f'scheduler hint {hint} takes one value, not {values}')
    return values[0] if values else None


def _zone_name(value):
    """The ``zone`` hint: one zone name (a string of 1 to 255
    characters), or None."""
    zone = _as_one(value, 'zone')
    if zone is not None and (not isinstance(zone, str)
                             or len(zone) > MAX_ZONE_NAME):
        raise exception.Invalid(
            reason=f'scheduler hint zone takes a zone name (a string of '
                   f'at most {MAX_ZONE_NAME} characters)')
    return zone


def _uuid_list(value, hint):
    """The ``near``/``far`` hint: uuids (strings), at most
    ``MAX_HINT_UUIDS``."""
    values = _as_list(value)
    if len(values) > MAX_HINT_UUIDS or not all(
            isinstance(v, str) and len(v) <= 255 for v in values):
        raise exception.Invalid(
            reason=f'scheduler hint {hint} takes a uuid or a list of at '
                   f'most {MAX_HINT_UUIDS} uuids')
    return values


def _resources(flavor):
    if not isinstance(flavor, dict):
        raise exception.Invalid(
            reason='the request spec has no flavor; it needs '
                   '{"vcpus", "memory_mb", "root_gb"}')
    resources = {}
    for field, rc in FLAVOR_RESOURCES:
        amount = flavor.get(field, 0) or 0
        if isinstance(amount, bool) or not isinstance(amount, int) \
                or amount < 0:
            raise exception.Invalid(
                reason=f'flavor {field} must be a whole number >= 0, not '
                       f'{amount!r}')
        if amount:
            resources[rc] = amount
    required, forbidden = _extra_specs(flavor.get('extra_specs'), resources)
    if not resources:
        raise exception.Invalid(reason='the flavor asks for no resources')
    return resources, required, forbidden


def _spec_amount(key, value):
    """The whole number of a ``resources:CLASS`` extra spec."""
    text = value if isinstance(value, str) else None
    if text is None or not text.isascii() or not text.isdigit() \
            or len(text) > 12 or int(text) > inventory.MAX_AMOUNT:
        raise exception.Invalid(
            reason=f'flavor extra spec {key[:100]} must be a whole number '
                   f'from 0 to {inventory.MAX_AMOUNT} (as a string), not '
                   f'{repr(value)[:40]}')
    return int(text)


def _extra_specs(specs, resources):
    """Apply the flavor's ``resources:`` specs to ``resources``; return
    its ``(required, forbidden)`` traits (frozensets)."""
    if specs is None:
        return frozenset(), frozenset()
    if not isinstance(specs, dict):
        raise exception.Invalid(
            reason='flavor extra_specs must be a mapping of strings to '
                   'strings')
    required, forbidden = set(), set()
    for key, value in specs.items():
        if not isinstance(key, str):
            raise exception.Invalid(
                reason='flavor extra_specs keys must be strings')
        if key.startswith(RESOURCES_PREFIX):
            rc = classes.check(key[len(RESOURCES_PREFIX):])
            amount = _spec_amount(key, value)
            if amount:
                resources[rc] = amount
            else:
                resources.pop(rc, None)
        elif key.startswith(TRAIT_PREFIX):
            trait = traits_mod.check(key[len(TRAIT_PREFIX):])
            if value == REQUIRED:
                required.add(trait)
            elif value == FORBIDDEN:
                forbidden.add(trait)
            else:
                raise exception.Invalid(
                    reason=f'flavor extra spec {key[:100]} must be '
                           f'{REQUIRED!r} or {FORBIDDEN!r}, not '
                           f'{repr(value)[:40]}')
    return frozenset(required), frozenset(forbidden)


class ScheduleRequest:
    """A parsed request spec, plus what scheduling it has learnt so far."""

    def __init__(self, spec):
        if not isinstance(spec, dict):
            raise exception.Invalid(reason='a request spec is a mapping')
        self.spec = spec
        # {rc: amount}; the traits asked for and against (frozensets).
        (self.resources, self.required_traits,
         self.forbidden_traits) = _resources(spec.get('flavor'))
        # Classes the API level takes from shared pools (its
        # ``pools.view``): no host of this cell provides them.
        for rc in _as_list(spec.get('resources_elsewhere')):
            if isinstance(rc, str):
                self.resources.pop(rc, None)
        self.availability_zone = spec.get('availability_zone') or None
        self.project_id = spec.get('project_id')
        self.user_id = spec.get('user_id')
        self.ignore_hosts = _as_list(spec.get('ignore_hosts'))
        hints = spec.get('scheduler_hints') or {}
        self.target_cell = _as_one(hints.get('target_cell'), 'target_cell')
        self.zone = _zone_name(hints.get('zone'))
        self.same_host = _as_list(hints.get('same_host'))
        self.different_host = _as_list(hints.get('different_host'))
        self.near = _uuid_list(hints.get('near'), 'near')
        self.far = _uuid_list(hints.get('far'), 'far')
        # Hosts the API level found near (``colocation``): tried first.
        self.preferred_providers = frozenset(
            p for p in _as_list(spec.get('preferred_providers'))
            if isinstance(p, str))
        group = spec.get('instance_group') or {}
        self.group_uuid = (group.get('uuid')
                           or _as_one(hints.get('group'), 'group'))
        self.group_policy = group.get('policy')
        self.group_members = _as_list(group.get('members'))
        # Where the hinted instances live, filled in by resolve():
        # resource provider uuids and service host names.
        self.same_host_providers = set()
        self.different_host_providers = set()
        self.group_providers = set()
        self.group_hosts = set(_as_list(group.get('hosts')))
        self._group_given = bool(group)
        # Providers whose claim failed for the instance being placed.
        self.failed_providers = set()

    @property
    def has_group(self):
        return self.group_policy in GROUP_POLICIES

    def describe_traits(self):
        """``HW_CPU_X86_AVX2, !CUSTOM_SLOW`` for operator messages."""
        return ', '.join(sorted(self.required_traits) + sorted(
            f'!{trait}' for trait in self.forbidden_traits))

    def describe_resources(self):
        """``VCPU=2, MEMORY_MB=4096, DISK_GB=20`` for operator messages."""
        return ', '.join(f'{rc}={amount}'
                         for rc, amount in self.resources.items())

    def resolve(self, context, instance_uuids=()):
        """Find the hosts of hinted instances and of the server group.

        In the cell of ``context``: the instances named are those of the
        cell that the API level resolved (``routing``); those of other
        cells hold nothing here. ``instance_uuids`` are the instances
        being scheduled: they are group members already but hold no
        allocations worth counting.
        """
        def providers_of(uuids):
            found = set()
            for uuid in uuids:
                found.update(usage.get_allocations_for_consumer(context,
                                                                uuid))
            return found

        if self.group_uuid and not self._group_given:
            raise exception.Invalid(
                reason='a cell\'s scheduler is given the server group '
                       '(instance_group) by the API level, which reads it')
        self.same_host_providers = providers_of(self.same_host)
        self.different_host_providers = providers_of(self.different_host)
        if self.has_group:
            scheduling = set(instance_uuids)
            self.group_providers = providers_of(
                m for m in self.group_members if m not in scheduling)

    def placed(self, provider_uuid, service_host):
        """Note an instance of this request placed on a host.

        Its siblings in a server group must then join (affinity) or avoid
        (anti-affinity) that host, and a new instance starts with no
        failed claims.
        """
        if self.has_group:
            self.group_providers.add(provider_uuid)
            self.group_hosts.add(service_host)
        self.failed_providers = set()
