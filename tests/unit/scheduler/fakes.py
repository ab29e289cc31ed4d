"""In-memory host states and requests for the scheduler's unit tests."""

from cellboot.scheduler import host_state
from cellboot.scheduler import request as request_mod

CELL1 = '11111111-1111-1111-1111-111111111111'
CELL2 = '22222222-2222-2222-2222-222222222222'
NOW = 1_700_000_000.0


def host(name, cell=CELL1, vcpus=16, memory_mb=32768, disk_gb=500,
         used=None, az='nova', disabled=False, last_seen_up=NOW,
         inventories=None, uuid=None, traits=()):
    """One host dict for ``HostStates.from_hosts``; uuid derived from name.

    ``inventories`` overrides fields per class, e.g.
    ``{'VCPU': {'allocation_ratio': 4.0}}``; a class mapped to None is
    left out (the host has none of it).
    """
    invs = {'VCPU': {'total': vcpus}, 'MEMORY_MB': {'total': memory_mb},
            'DISK_GB': {'total': disk_gb}}
    for rc, fields in (inventories or {}).items():
        if fields is None:
            invs.pop(rc)
        else:
            invs.setdefault(rc, {}).update(fields)
    return {
        'uuid': uuid or f'uuid-{name}', 'service_host': name,
        'nodename': name, 'cell_uuid': cell, 'availability_zone': az,
        'disabled': disabled, 'last_seen_up': last_seen_up,
        'generation': 1, 'inventories': invs, 'usages': dict(used or {}),
        'traits': list(traits),
    }


def states(*hosts, read_at=NOW):
    """HostStates of ``hosts``, every cell read at ``read_at``."""
    cells = {h['cell_uuid'] for h in hosts}
    return host_state.HostStates.from_hosts(
        hosts, {cell: read_at for cell in cells})


def request(vcpus=1, memory_mb=512, root_gb=10, extra_specs=None, **spec):
    """A ScheduleRequest; ``spec`` keys go into the request spec."""
    spec['flavor'] = {'vcpus': vcpus, 'memory_mb': memory_mb,
                      'root_gb': root_gb, 'flavorid': 'f1'}
    if extra_specs is not None:
        spec['flavor']['extra_specs'] = extra_specs
    return request_mod.ScheduleRequest(spec)


def passing(states_, mask):
    """Service host names where ``mask`` is True (None: all hosts)."""
    if mask is None:
        return sorted(states_.service_hosts)
    return sorted(states_.service_hosts[p] for p in mask.nonzero()[0])
