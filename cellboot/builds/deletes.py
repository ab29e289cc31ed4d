"""Deleting a server that lives in a cell: steps that can be finished.

A delete touches three places that fail separately (the cell database,
the scheduler's claims, the API database), so it is a sequence of
idempotent steps rather than one transaction:

1. ``soft_delete_in_cell`` — the instance soft-deleted in its cell (one
   already soft-deleted is left so);
2. the instance mapping marked queued for delete: the server is deleted
   for its owner from here on, whatever fails next;
3. and 4. ``finish`` — its claims released through the scheduler, and a
   build request the boot flow had not removed yet removed.

Whoever finds a delete unfinished completes it with the same steps: the
API on a retried DELETE, the super conductors' sweep
(``cellboot.conductor.unfinished_deletes``) otherwise.
"""

import sqlalchemy as sa

from cellboot import context as cb_context
from cellboot.db.api import connection as api_db
from cellboot.db.api import models as api_models
from cellboot import exception
from cellboot import notifications
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import instance as instance_obj


_REQUESTS = api_models.BuildRequest.__table__
_MAPPINGS = api_models.InstanceMapping.__table__


@api_db.writer
def delete_pending(context, instance_uuid):
    """Delete a server that is only a build request: the build request
    and its mapping, both or neither; False when there was no build
    request (the boot flow moved the server to a cell meanwhile).

    The boot flow notices either row missing and cleans up what it made
    (``fates.clean_up_deleted``).
    """
    deleted = context.session.execute(sa.delete(_REQUESTS).where(
        _REQUESTS.c.instance_uuid == instance_uuid)).rowcount
    if deleted:
        context.session.execute(sa.delete(_MAPPINGS).where(
            _MAPPINGS.c.instance_uuid == instance_uuid))
    return bool(deleted)


def soft_delete_in_cell(context, uuid, cell):
    """Step 1; False when the cell has no instance row at all.

    Raises the cell database's error when it cannot be reached. The
    call that soft-deletes the instance sends ``instance.delete.start``
    and ``.end`` around it (one that finds it deleted sends nothing).
    """
    try:
        with cb_context.target_cell(context, cell) as cctxt:
            instance = instance_obj.Instance.get_by_uuid(
                cctxt, uuid, read_deleted=True)
            if not instance.deleted:
                notifications.instance_delete(context, instance, 'start')
                instance.destroy(cctxt)
                notifications.instance_delete(context, instance, 'end')
    except exception.InstanceNotFound:
        return False
    return True


def finish(context, uuid, scheduler):
    """Steps 3 and 4; whether anything was left to do.

    Idempotent: no claims left to release is fine, and so is a build
    request that is gone (the boot flow's delete-build-request, finding
    its request gone, cleans up what it made, which is what a deleted
    server needs).
    """
    released = scheduler.release_resources(context, uuid)
    removed = build_request_obj.BuildRequest.destroy_by_instance_uuid(
        context, uuid)
    return bool(released) or removed
