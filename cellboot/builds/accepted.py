"""The rows of an accepted boot request, whoever accepted it.

A boot request is accepted when, in one API-database transaction, each
of its instances gets a build request, a request spec and an instance
mapping with no cell (and, when the request names a server group, a
membership). cellboot's REST API writes them after counting the
project's quota; the Nova door writes them for what nova-api accepted,
under nova-api's own uuids. Both go through ``write``, so the super
conductor's flow finds the same rows whichever door the request came
through.
"""

from oslo_serialization import jsonutils

from cellboot.objects import build_request
from cellboot.objects import instance_mapping
from cellboot.objects import request_spec


def payload(instance_uuid, project_id, user_id, instance):
    """One instance's entry of ``schedule_and_build_instances``."""
    values = dict(instance, uuid=instance_uuid, project_id=project_id,
                  user_id=user_id)
    return {'instance_uuid': instance_uuid, 'project_id': project_id,
            'user_id': user_id, 'instance': values}


def stored_size(instance_uuid, project_id, user_id, instance, spec):
    """Bytes one instance takes in the boot's cast and flow store.

    Its build request and request spec travel in one RPC message and go,
    as JSON with non-ASCII escaped, into one row of the boot flow's
    store: every door bounds a request by the sum (``[api]
    max_boot_payload_size``) before it writes anything.
    """
    return (len(jsonutils.dumps(payload(instance_uuid, project_id, user_id,
                                        instance)))
            + len(jsonutils.dumps(spec)))


def write(context, project_id, user_id, instances, spec, group=None):
    """Write the rows of ``instances``; their build request payloads.

    ``instances``: ``[(uuid, instance values)]``; ``spec`` the request
    spec they share. Must run in a writer transaction of the API
    database, which it joins: one statement per table for the whole
    request, and a failure leaves none of them.
    """
    uuids = [uuid for uuid, _values in instances]
    build_requests = [payload(uuid, project_id, user_id, values)
                      for uuid, values in instances]
    build_request.BuildRequest.create_many(context, [
        {'instance_uuid': entry['instance_uuid'], 'project_id': project_id,
         'instance': entry['instance'], 'user_id': user_id}
        for entry in build_requests])
    request_spec.RequestSpec.create_many(context, uuids, spec)
    flavor = spec.get('flavor') or {}
    instance_mapping.InstanceMapping.create_many(
        context, uuids, project_id, user_id=user_id,
        vcpus=flavor.get('vcpus', 0), memory_mb=flavor.get('memory_mb', 0))
    if group is not None:
        group.add_members(context, uuids)
    return build_requests
