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

from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import instance as instance_obj


def soft_delete_in_cell(context, uuid, cell):
    """Step 1; False when the cell has no instance row at all.

    Raises the cell database's error when it cannot be reached.
    """
    try:
        with cb_context.target_cell(context, cell) as cctxt:
            instance = instance_obj.Instance.get_by_uuid(
                cctxt, uuid, read_deleted=True)
            if not instance.deleted:
                instance.destroy(cctxt)
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
