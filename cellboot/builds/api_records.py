"""The API database's side of a build that reached its cell.

Once an instance exists in a cell, two rows of the API database say so
or stop saying otherwise: its mapping is pointed at the cell and its
build request goes. Both can find their row already gone, and telling
an owner's delete from a replay of this very step (a conductor that
died after it) is what these functions are for. They live apart from
``fates`` because the boot flow's mapping steps call them in batches
on the success path, where nothing is failing; ``fates.settle`` uses
them for one instance.
"""

from cellboot import exception
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import instance_mapping as mapping_obj


def map_to_cell(context, instance_uuid, cell_mapping):
    """Point the instance's mapping at its cell; False if it is gone."""
    return mapping_obj.InstanceMapping.set_cell_of(context, instance_uuid,
                                                   cell_mapping)


def map_many_to_cell(context, instance_uuids, cell_mapping):
    """``{uuid: map_to_cell(...)}`` in one statement when all are there.

    Only when some mapping is missing (an owner's delete) is each
    instance pointed again on its own, to tell which.
    """
    uuids = list(instance_uuids)
    if mapping_obj.InstanceMapping.set_cell_of_many(
            context, uuids, cell_mapping) == len(uuids):
        return dict.fromkeys(uuids, True)
    return {uuid: map_to_cell(context, uuid, cell_mapping) for uuid in uuids}


def delete_build_requests(context, instance_uuids):
    """``{uuid: delete_build_request(...)}``, one statement when all
    are there.

    Only when some build request is gone already is each instance told
    apart on its own, as ``delete_build_request`` does (the requests this
    call removed count as removed by this step, through their mappings).
    """
    uuids = list(instance_uuids)
    if build_request_obj.BuildRequest.destroy_by_instance_uuids(
            context, uuids) == len(uuids):
        return dict.fromkeys(uuids, True)
    return {uuid: delete_build_request(context, uuid) for uuid in uuids}


def delete_build_request(context, instance_uuid):
    """Remove the build request; False if the owner already did.

    A build request that is gone was removed either by the owner's
    delete (which also removes the mapping, or marks it queued for
    delete) or by an earlier run of this very step: a conductor that died
    after removing it, whose flow is now resumed. Only the first is a
    deleted server; mistaking the second for it would destroy a server
    its owner still has.
    """
    if not build_request_obj.BuildRequest.destroy_by_instance_uuid(
            context, instance_uuid):
        try:
            mapping = mapping_obj.InstanceMapping.get_by_instance_uuid(
                context, instance_uuid)
        except exception.InstanceMappingNotFound:
            return False
        return (mapping.cell_mapping is not None and
                not mapping.queued_for_delete)
    return True
