"""What an inventory is, and what it lets a consumer take.

One rule set, used by the provider updates (which validate what compute
hosts report), by the claims (which enforce it in the database
transaction) and by the host states (which predict it in memory): if the
scheduler and the claims computed capacity differently, the scheduler
would keep choosing hosts whose claims then fail.
"""

import math

from cellboot import exception
from cellboot.scheduler.resources import classes

VCPU = 'VCPU'
MEMORY_MB = 'MEMORY_MB'
DISK_GB = 'DISK_GB'
RESOURCE_CLASSES = (VCPU, MEMORY_MB, DISK_GB)

FIELDS = ('total', 'reserved', 'allocation_ratio', 'min_unit', 'max_unit',
          'step_size')

# The largest value an INTEGER column holds on every backend (signed 32
# bits): 2 PiB of MEMORY_MB, far beyond one host.
MAX_AMOUNT = 2 ** 31 - 1


def capacity(total, reserved, allocation_ratio):
    """How much of a resource class consumers may hold in all.

    ``(total - reserved) * allocation_ratio``, rounded down to a whole
    unit. The product is rounded to 6 decimals first so that a ratio such
    as 1.15 does not lose a unit to binary floating point
    (100 * 1.15 == 114.99999999999999).
    """
    return max(0, math.floor(round((total - reserved) * allocation_ratio,
                                   6)))


def unit_violation(inventory, amount):
    """Why one consumer may not take ``amount`` at once, or None."""
    if amount < inventory['min_unit']:
        return f'{amount} is below its min_unit of {inventory["min_unit"]}'
    if amount > inventory['max_unit']:
        return (f'{amount} is above its max_unit of {inventory["max_unit"]} '
                f'per consumer')
    if amount % inventory['step_size']:
        return (f'{amount} is not a multiple of its step_size of '
                f'{inventory["step_size"]}')
    return None


def normalize(provider_uuid, inventories):
    """Validate reported inventories and fill in the defaults.

    ``inventories`` is ``{resource_class: {'total': int, ...}}``; missing
    fields default to reserved 0, allocation_ratio 1.0, min_unit 1,
    max_unit total, step_size 1. A host that has none of a resource class
    leaves it out. Raises InvalidInventory naming the field at fault.
    """
    if not isinstance(inventories, dict):
        raise exception.InvalidInventory(
            resource_class='any', uuid=provider_uuid,
            reason='inventories must be a mapping of resource class to '
                   'inventory')
    return {rc: _normalize_one(provider_uuid, rc, inv)
            for rc, inv in inventories.items()}


def _normalize_one(provider_uuid, rc, inv):
    def invalid(reason):
        return exception.InvalidInventory(resource_class=rc,
                                          uuid=provider_uuid, reason=reason)

    if not classes.is_valid(rc):
        raise invalid('not a resource class: use a standard class or '
                      'CUSTOM_ followed by A-Z, 0-9 and _')
    if not isinstance(inv, dict) or 'total' not in inv:
        raise invalid('an inventory is a mapping with at least "total"')
    unknown = set(inv) - set(FIELDS)
    if unknown:
        raise invalid(f'unknown field(s) {", ".join(sorted(unknown))}')
    values = {'reserved': 0, 'allocation_ratio': 1.0, 'min_unit': 1,
              'step_size': 1}
    values.update(inv)
    values.setdefault('max_unit', values['total'])
    for field in FIELDS:
        value = values[field]
        if field == 'allocation_ratio':
            if (isinstance(value, bool)
                    or not isinstance(value, (int, float))
                    or not value > 0 or math.isinf(value)):
                raise invalid(f'allocation_ratio must be a positive number, '
                              f'not {value!r}')
            values[field] = float(value)
        elif isinstance(value, bool) or not isinstance(value, int):
            raise invalid(f'{field} must be an integer, not {value!r}')
        elif value > MAX_AMOUNT:
            raise invalid(f'{field} must be at most {MAX_AMOUNT}')
    if values['total'] < 1:
        raise invalid('total must be at least 1 (leave out a resource '
                      'class the host does not have)')
    if not 0 <= values['reserved'] <= values['total']:
        raise invalid(f'reserved must be between 0 and total '
                      f'({values["total"]})')
    if values['min_unit'] < 1 or values['step_size'] < 1:
        raise invalid('min_unit and step_size must be at least 1')
    if not values['min_unit'] <= values['max_unit'] <= values['total']:
        raise invalid(f'max_unit must be between min_unit '
                      f'({values["min_unit"]}) and total '
                      f'({values["total"]})')
    return {field: values[field] for field in FIELDS}
