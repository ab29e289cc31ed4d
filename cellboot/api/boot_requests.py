"""Accepting a boot: every row of every instance in one transaction.

``POST /servers`` writes, per instance, a build request, a request spec
and an instance mapping with no cell, plus the server group membership
when the request names a group, all in one API-database transaction:
either the whole request is accepted or nothing is written. The cast to
the super conductor comes after the commit; the rows are the source of
truth (docs/rpc.md), so a cast that fails leaves an accepted request for
the sweeper to start.
"""

from oslo_utils import uuidutils

from cellboot.db.api import connection as api_db
from cellboot.objects import build_request
from cellboot.objects import instance_mapping
from cellboot.objects import request_spec


def new_reservation_id():
    """Nova's shape: ``r-`` and eight characters."""
    return 'r-' + uuidutils.generate_uuid()[:8]


@api_db.writer
def persist(context, count, instance, spec, group=None):
    """Write the rows of ``count`` instances; their payloads.

    ``instance`` is the serialized instance shared by all (name, flavor,
    image, metadata, zone, reservation id); ``spec`` the request spec.
    Returns ``(build_requests, request_specs)``, the arguments of
    ``schedule_and_build_instances``. Nested writers join this
    transaction, so a failure of any row rolls back all of them.
    """
    build_requests = []
    for _index in range(count):
        uuid = uuidutils.generate_uuid()
        values = dict(instance, uuid=uuid, project_id=context.project_id,
                      user_id=context.user_id)
        build_request.BuildRequest.create(context, uuid, context.project_id,
                                          values, user_id=context.user_id)
        request_spec.RequestSpec.create(context, uuid, spec)
        instance_mapping.InstanceMapping.create(
            context, uuid, context.project_id, user_id=context.user_id)
        build_requests.append({'instance_uuid': uuid,
                               'project_id': context.project_id,
                               'user_id': context.user_id,
                               'instance': values})
    if group is not None:
        group.add_members(context, [br['instance_uuid']
                                    for br in build_requests])
    return build_requests, [spec] * count
