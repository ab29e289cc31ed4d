"""Quotas: what a project may have, what it has, and a boot's check.

Counted, not reserved (Nova's "counting quotas"): there is no usage
table to drift; a boot counts the project's live servers and their
flavors' sizes (``objects.quota.count_usage``) and compares with the
limits: the project's own (``quotas`` table) or else the ``[quota]``
defaults. -1 is unlimited.

Two boots of one project must not both see room for the last server.
``claim`` therefore runs inside the boot's own API-database transaction,
before it writes, with the project's lock row held (``SELECT ... FOR
UPDATE``): the second boot counts once the first has committed. A
project that has never booted has no lock row yet; ``claim`` then
raises ``ProjectNotLocked`` and the caller makes the row (``prepare``)
and runs its transaction again.

Allocation requests (``/os-allocations``) are counted the same way, per
resource class: a limit named by a class (``DISK_GB``, ``CUSTOM_...``)
bounds the sum of that class over the project's allocation requests
(``claim_classes``), ``[quota] allocation_class_default`` where none was
set. Servers' resources are not counted in these limits.
"""

from cellboot.conf import CONF
from cellboot.conf import quota as quota_conf
from cellboot import exception
from cellboot.objects import quota as quota_obj

RESOURCES = ('instances', 'cores', 'ram')
UNLIMITED = quota_conf.UNLIMITED

# The largest limit (the column is a 32-bit integer).
MAX_LIMIT = 2 ** 31 - 1

# The longest project id (the width of the columns that hold one).
MAX_PROJECT_ID_LENGTH = 255


class ProjectNotLocked(Exception):
    """The project has no lock row yet: make it, then try again."""


def defaults():
    """The ``[quota]`` limits of every project."""
    return {resource: getattr(CONF.quota, resource)
            for resource in RESOURCES}


def limits(context, project_id):
    """``(limits, overridden)``: a project's limits, and which are its own.

    ``overridden`` is the set of resources whose limit was set for the
    project; the others are the defaults.
    """
    own = {resource: value for resource, value in
           quota_obj.get_limits(context, project_id).items()
           if resource in RESOURCES}
    merged = defaults()
    merged.update(own)
    return merged, set(own)


def usage(context, project_id):
    """``{resource: amount}`` a project has now."""
    return quota_obj.count_usage(context, project_id)


def validate_project_id(project_id):
    """Invalid unless ``project_id`` could be one (the column's width)."""
    if (not isinstance(project_id, str) or not project_id.strip()
            or len(project_id) > MAX_PROJECT_ID_LENGTH
            or '\x00' in project_id):
        raise exception.Invalid(
            reason=f'a project id is 1 to {MAX_PROJECT_ID_LENGTH} '
                   f'characters')
    return project_id


def validate_limits(values, classes_allowed=False):
    """Invalid unless ``values`` maps known resources (or, when
    ``classes_allowed``, other names: resource classes, which the caller
    checks) to -1..2**31-1."""
    if not values:
        raise exception.Invalid(
            reason=f'give at least one limit of {", ".join(RESOURCES)}')
    for resource, value in values.items():
        if resource not in RESOURCES and not classes_allowed:
            raise exception.Invalid(
                reason=f'unknown quota {str(resource)[:80]!r}; quotas are '
                       f'{", ".join(RESOURCES)}')
        if (isinstance(value, bool) or not isinstance(value, int)
                or not UNLIMITED <= value <= MAX_LIMIT):
            raise exception.Invalid(
                reason=f'the {resource} quota must be an integer from '
                       f'{UNLIMITED} (unlimited) to {MAX_LIMIT}, not '
                       f'{value!r}')
    return values


def update(context, project_id, values, check_classes=None):
    """Set some of a project's limits, after checking them.

    ``check_classes(context, names)`` raises Invalid unless every name
    is a resource class that exists (the scheduler's, above this
    module: ``scheduler.allocations.check_class_names``); without it, a
    name other than the resources is refused.
    """
    validate_project_id(project_id)
    validate_limits(values, classes_allowed=check_classes is not None)
    named = sorted(name for name in values if name not in RESOURCES)
    if named:
        check_classes(context, named)
    quota_obj.set_limits(context, project_id, values)


def reset(context, project_id):
    """Give a project the defaults back; how many limits it had set."""
    validate_project_id(project_id)
    return quota_obj.delete_limits(context, project_id)


def fit(limits, used, min_count, max_count, vcpus, memory_mb):
    """How many of ``min_count..max_count`` instances fit the limits.

    As Nova does, a multi-create gets as many instances as fit, up to
    ``max_count``; when not even ``min_count`` fit, QuotaExceeded names
    the first resource (instances, cores, ram) they would overrun, in
    Nova's words.
    """
    each = {'instances': 1, 'cores': vcpus, 'ram': memory_mb}
    allowed = max_count
    for resource in RESOURCES:
        if limits[resource] == UNLIMITED or not each[resource]:
            continue
        room = max(limits[resource] - used[resource], 0)
        allowed = min(allowed, room // each[resource])
    if allowed >= min_count:
        return allowed
    for resource in RESOURCES:
        requested = min_count * each[resource]
        if (limits[resource] != UNLIMITED
                and used[resource] + requested > limits[resource]):
            raise exception.QuotaExceeded(
                resource=resource, requested=requested,
                used=used[resource], limit=limits[resource])
    raise AssertionError('fit: nothing over quota, yet nothing fits')


def claim(context, project_id, min_count, max_count, vcpus, memory_mb):
    """Inside the caller's writer transaction: how many instances fit.

    The first statement of the transaction: locks the project's row
    (``ProjectNotLocked`` when it has none yet), counts its usage, and
    returns the number of instances that fit (see ``fit``) or raises
    QuotaExceeded. The lock is held until the caller commits its rows.
    """
    if not quota_obj.lock_project(context, project_id):
        raise ProjectNotLocked(project_id)
    current, _overridden = limits(context, project_id)
    return fit(current, usage(context, project_id), min_count, max_count,
               vcpus, memory_mb)


def prepare(context, project_id):
    """Make the project's lock row, for ``claim`` to find next time."""
    quota_obj.create_lock(context, project_id)


def class_limits(context, project_id):
    """``{class: limit}`` set for the project's allocation requests."""
    return {resource: value for resource, value in
            quota_obj.get_limits(context, project_id).items()
            if resource not in RESOURCES}


def claim_classes(context, project_id, requested, used):
    """Inside the caller's writer transaction, before it writes an
    allocation request asking ``requested`` (``{class: amount}``) for a
    project whose requests hold ``used``: locks the project's row
    (``ProjectNotLocked`` when it has none yet) and raises QuotaExceeded
    naming the first class over its limit."""
    if not quota_obj.lock_project(context, project_id):
        raise ProjectNotLocked(project_id)
    own = class_limits(context, project_id)
    held = used(context, project_id)
    for rc, amount in sorted(requested.items()):
        limit = own.get(rc, CONF.quota.allocation_class_default)
        if limit != UNLIMITED and held.get(rc, 0) + amount > limit:
            raise exception.QuotaExceeded(
                resource=rc, requested=amount, used=held.get(rc, 0),
                limit=limit)
