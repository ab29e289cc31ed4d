"""The seeded fleet and request stream of ``placement_accuracy.py``.

Both the hierarchical scheduler and the global reference replay the very
same items, so the stream is decided here, from the seed alone, never
from what either scheduler did: a delete names the create it undoes by
its position in the stream (each side deletes what it placed of it), a
build that fails is marked as such when it is drawn.

Why this mix: the hierarchy can only lose requests where the API level's
one-aggregate-per-cell view is too coarse -- large flavors that fit one
host of a cell but whose cell looks fuller than it is, multi-creates
split across cells, groups whose policy ties them to one cell (affinity)
or spreads them over many hosts (anti-affinity) -- and where churn
(failed builds, deletes) leaves holes to be found again. Small
single-instance boots, the bulk of any real stream, fill the fleet
around them.

``generic`` (``--generic``) adds custom resources: a seeded quarter of
the hosts has ``CUSTOM_FPGA`` (FPGA_PER_HOST units) and half the
hosts the trait ``CUSTOM_ACCURACY_SSD`` (``host_extras``), and a
seeded share of the creates asks ``resources:CUSTOM_FPGA=1`` or
requires the trait -- drawn from a generator of their own, so that the
rest of the stream is the same with and without them.
"""

import random

# name: (vcpus, memory_mb, root_gb), weight
FLAVORS = {
    'tiny': ((1, 1024, 10), 30),
    'small': ((2, 4096, 40), 30),
    'medium': ((4, 8192, 80), 20),
    'large': ((8, 16384, 160), 12),
    'xlarge': ((16, 32768, 320), 6),
    'huge': ((32, 65536, 640), 2),
}
# Host kinds, {rc: total}, weight: the same for both fleets.
HOST_KINDS = (
    ({'VCPU': 16, 'MEMORY_MB': 65536, 'DISK_GB': 1000}, 20),
    ({'VCPU': 32, 'MEMORY_MB': 131072, 'DISK_GB': 2000}, 50),
    ({'VCPU': 64, 'MEMORY_MB': 262144, 'DISK_GB': 4000}, 30),
)

# The generic stream: a class on a fraction of the hosts, a trait on
# another, and the shares of creates asking each.
FPGA_CLASS = 'CUSTOM_FPGA'
FPGA_PER_HOST = 8
FPGA_HOSTS = 0.25
TRAIT = 'CUSTOM_ACCURACY_SSD'
TRAIT_HOSTS = 0.5
FPGA_SHARE = 0.1
TRAIT_SHARE = 0.2

DELETE_SHARE = 0.2       # of the items, once there is something to delete
MULTI_SHARE = 0.25       # of the creates: 2 to 10 instances
FAIL_SHARE = 0.05        # of the creates: the build fails, claims go back
JOIN_SHARE = 0.1         # of the single creates: join an existing group
ANTI_SHARE = 0.4         # of the multi-creates: a new anti-affinity group
AFFINITY_SHARE = 0.15    # of the multi-creates: a new affinity group


def host_sizes(hosts, seed):
    """Per host ``{rc: total}``, drawn from HOST_KINDS by the seed."""
    rng = random.Random(f'hosts-{seed}')
    kinds = [kind for kind, _ in HOST_KINDS]
    weights = [weight for _, weight in HOST_KINDS]
    return [dict(rng.choices(kinds, weights)[0]) for _ in range(hosts)]


def host_extras(hosts, seed):
    """Per host ``({class: total}, [trait, ...])`` of the generic fleet,
    drawn by the seed (``scheduler_fleet.CellRows.add`` writes them)."""
    rng = random.Random(f'generic-hosts-{seed}')
    found = []
    for _ in range(hosts):
        extra = ({FPGA_CLASS: FPGA_PER_HOST} if rng.random() < FPGA_HOSTS
                 else {})
        found.append((extra, [TRAIT] if rng.random() < TRAIT_HOSTS else []))
    return found


class Item:
    """One stream item: a create (of ``count`` instances) or a delete."""

    __slots__ = ('index', 'kind', 'flavor', 'count', 'group', 'policy',
                 'fails', 'deletes', 'fpga', 'trait')

    def __init__(self, index, kind, flavor=None, count=0, group=None,
                 policy=None, fails=False, deletes=None, fpga=False,
                 trait=False):
        self.index = index
        self.kind = kind
        self.flavor = flavor
        self.count = count
        self.group = group
        self.policy = policy
        self.fails = fails
        self.deletes = deletes  # the index of the create undone
        self.fpga = fpga        # asks one CUSTOM_FPGA per instance
        self.trait = trait      # requires TRAIT

    def resources(self):
        """``{class: amount}`` one instance asks."""
        vcpus, memory_mb, root_gb = FLAVORS[self.flavor][0]
        found = {'VCPU': vcpus, 'MEMORY_MB': memory_mb, 'DISK_GB': root_gb}
        if self.fpga:
            found[FPGA_CLASS] = 1
        return found

    def spec(self, members):
        """The request spec; ``members``: the group's live members (the
        instances of this request included)."""
        vcpus, memory_mb, root_gb = FLAVORS[self.flavor][0]
        spec = {'flavor': {'vcpus': vcpus, 'memory_mb': memory_mb,
                           'root_gb': root_gb, 'flavorid': self.flavor},
                'num_instances': self.count, 'project_id': 'accuracy',
                'user_id': 'accuracy'}
        extra = {}
        if self.fpga:
            extra[f'resources:{FPGA_CLASS}'] = '1'
        if self.trait:
            extra[f'trait:{TRAIT}'] = 'required'
        if extra:
            spec['flavor']['extra_specs'] = extra
        if self.group:
            spec['instance_group'] = {'uuid': self.group,
                                      'policy': self.policy,
                                      'members': list(members), 'hosts': []}
        return spec

    def shape(self):
        """What kind of request this is, for the refusal analysis."""
        if self.kind != 'create':
            return 'delete'
        size = 'single' if self.count == 1 else 'multi'
        generic = ''.join([' +FPGA'] * self.fpga + [' +trait'] * self.trait)
        return f'{self.flavor} {size} {self.policy or "no group"}{generic}'


def stream(seed, generic=False):
    """Items without end, the same for the same seed (and ``generic``)."""
    rng = random.Random(f'stream-{seed}')
    generic_rng = random.Random(f'generic-{seed}') if generic else None
    names = list(FLAVORS)
    weights = [weight for _, weight in FLAVORS.values()]
    alive = []          # indexes of creates not deleted yet
    groups = []         # (uuid, policy) of the groups made so far
    index = 0
    while True:
        if alive and rng.random() < DELETE_SHARE:
            victim = alive.pop(rng.randrange(len(alive)))
            yield Item(index, 'delete', deletes=victim)
            index += 1
            continue
        flavor = rng.choices(names, weights)[0]
        group = policy = None
        if rng.random() < MULTI_SHARE:
            count = rng.randint(2, 10)
            draw = rng.random()
            if draw < ANTI_SHARE:
                policy = 'anti-affinity'
            elif draw < ANTI_SHARE + AFFINITY_SHARE:
                policy = 'affinity'
            if policy:
                group = _uuid(rng)
                groups.append((group, policy))
        else:
            count = 1
            if groups and rng.random() < JOIN_SHARE:
                group, policy = groups[rng.randrange(len(groups))]
        fails = rng.random() < FAIL_SHARE
        if not fails:
            alive.append(index)
        fpga = trait = False
        if generic_rng is not None:
            fpga = generic_rng.random() < FPGA_SHARE
            trait = generic_rng.random() < TRAIT_SHARE
        yield Item(index, 'create', flavor, count, group, policy, fails,
                   fpga=fpga, trait=trait)
        index += 1


def _uuid(rng):
    """A uuid from the stream's own generator (reproducible)."""
    digits = f'{rng.getrandbits(128):032x}'
    return (f'{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-'
            f'a{digits[17:20]}-{digits[20:]}')


def instance_uuids(item):
    """The instances of a create: named by the seed's stream position, so
    that both sides boot the same uuids."""
    return [f'{item.index:08x}-0000-4000-a000-{n:012x}'
            for n in range(item.count)]
