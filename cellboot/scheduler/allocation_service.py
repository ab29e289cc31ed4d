"""Create, show, list and delete allocation requests: what the REST
handler (``/os-allocations``) and the scheduler's RPC endpoint share.

The order of the writes is what makes a kill at any point harmless
(``allocations`` has the placement itself):

* create: the row is committed ``placing`` (after the project's class
  quotas, under its lock), then the claim is made, then the row is set
  ``placed``. A request that cannot be placed is marked ``settling``,
  released and deleted. If the row stopped being ``placing`` meanwhile
  (a delete, or the sweep), the claim just made is released.
* delete: the row is marked ``deleting``, every claim of its consumer is
  released (pools and host, ``release_resources``), then the row is
  deleted. A repeated delete, or the sweep, finishes what a failure
  left.
* the sweep (``cellboot.conductor.unplaced_allocations``): ``settle``
  of each row that is not placed and is older than a bound.

Ownership: ``project_id`` given to ``get``/``delete`` is the only
project whose rows they find; another project's row is AllocationNotFound,
exactly as a row that does not exist.
"""

from oslo_log import log as logging
from oslo_utils import uuidutils

from cellboot import exception
from cellboot.scheduler import allocation_records as rows
from cellboot.scheduler import allocations

LOG = logging.getLogger(__name__)


def view(row):
    """The JSON of an allocation request (REST and RPC alike)."""
    request = row['request']
    provider = None
    if row['provider_uuid']:
        provider = {'uuid': row['provider_uuid'],
                    'name': request.get('provider_name'),
                    'kind': row['provider_kind']}
    created = row['created_at']
    return {
        'id': row['uuid'], 'status': row['status'],
        'resources': request['resources'],
        'required_traits': request['required_traits'],
        'forbidden_traits': request['forbidden_traits'],
        'near': request.get('near', []), 'far': request.get('far', []),
        'availability_zone': request.get('availability_zone'),
        'provider': provider, 'cell': row['cell_name'],
        'project_id': row['project_id'], 'user_id': row['user_id'],
        'created_at': created.isoformat() + 'Z' if created else None}


def settle(context, scheduler, uuid, cell_uuid=None):
    """Release every claim of the consumer ``uuid``, then delete its row
    (both idempotent)."""
    scheduler.release_resources(context, uuid, cell_uuid=cell_uuid)
    rows.delete(context, uuid)


def create(context, scheduler, body):
    """Check, record and place a request of the caller's project; its
    view. Raises Invalid, QuotaExceeded or NoValidHost, leaving nothing
    (or a ``placing`` row for the sweep, if this process dies)."""
    if not context.project_id:
        raise exception.Forbidden(
            message='An allocation belongs to a project: a project-scoped '
                    'token is needed.')
    request = allocations.checked(context, body)
    uuid = uuidutils.generate_uuid()
    rows.insert_placing(context, uuid, context.project_id, context.user_id,
                        request)
    try:
        provider = allocations.place(context, scheduler, uuid, request)
    except BaseException:
        try:
            rows.mark(context, uuid, rows.SETTLING, only_from=rows.PLACING)
            settle(context, scheduler, uuid)
        except Exception as exc:
            LOG.warning('Could not give up allocation %s now (%s); the '
                        'sweep will', uuid, exc)
        raise
    if not rows.mark_placed(context, uuid, request, provider):
        LOG.info('Allocation %s was deleted while being placed; releasing '
                 'its claim', uuid)
        settle(context, scheduler, uuid, provider.get('cell_uuid'))
        raise exception.AllocationNotFound(uuid=uuid)
    return view(rows.get(context, uuid))


def get(context, uuid, project_id=None):
    """The row of ``uuid`` (of ``project_id`` only, when given)."""
    if not isinstance(uuid, str) or not uuidutils.is_uuid_like(uuid):
        raise exception.AllocationNotFound(uuid=str(uuid)[:80])
    row = rows.get(context, uuid)
    if project_id is not None and row['project_id'] != project_id:
        raise exception.AllocationNotFound(uuid=uuid)
    return row


def delete(context, scheduler, uuid, project_id=None):
    """Release and delete an allocation request (of ``project_id`` only,
    when given); AllocationNotFound when there is none."""
    row = get(context, uuid, project_id)
    rows.mark(context, uuid, rows.DELETING)
    settle(context, scheduler, uuid, row['cell_uuid'])
