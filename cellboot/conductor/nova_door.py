"""The Nova door: the builds an unmodified nova-api casts, run by cellboot.

nova-api 34 ends every ``POST /servers`` with one cast of
``schedule_and_build_instances`` (exchange ``nova``, topic ``conductor``,
namespace ``compute_task``, 1.17) to whatever serves its conductor
topic. With ``[nova] enabled`` each super conductor serves it with
``NovaDoor``, which

1. reads the cast's arguments with ``cellboot.nova.casts`` (Nova's
   primitives, without nova); a cast that is not what nova-api sends is
   refused with one ERROR line that says where, and builds nothing;
2. accepts the request as cellboot's REST API would
   (``cellboot.builds.accepted``): a build request, a request spec and a
   cell-less instance mapping per instance, under nova-api's uuids, in
   one transaction. A redelivered cast finds them written and writes
   nothing;
3. starts the boot flow under the key ``nova:<reservation id>``, so a
   redelivered cast starts nothing twice either.

What cellboot cannot build (volumes, ports, forced hosts, PCI/NUMA, soft
affinity) is accepted all the same and ends in ERROR, every instance in
cell0 with a fault that names it: the request spec says ``refused`` and
the flow's ``schedule`` step does the rest. A Nova server group with an
affinity or anti-affinity policy is honoured: cellboot's own group of
that uuid (made on its first use, in the same transaction) gets the
instances as members, and cellboot's scheduler keeps the policy.
The admin password and injected files are never read.

Nova's other ``compute_task`` methods (resize, rebuild, unshelve, live
migration...) answer ``NotSupportedByCellboot`` at once: a call gets it
back instead of timing out, a cast logs it.
"""

from oslo_db import exception as db_exc
from oslo_log import log as logging
import oslo_messaging

from cellboot.builds import accepted
from cellboot.conf import CONF
from cellboot.db.api import connection as api_db
from cellboot.db import outage
from cellboot import exception
from cellboot import metrics
from cellboot.nova import casts
from cellboot.nova import primitives
from cellboot.objects import instance_mapping
from cellboot.objects import server_group
from cellboot.rpc import endpoint

LOG = logging.getLogger(__name__)

# Every 1.x: a later minor version only adds arguments, which arrive as
# ``later`` and are not read.
TARGET_VERSION = '1.99'

FLOW_KEY_PREFIX = 'nova:'


def _instance(boot, instance):
    return {'display_name': instance.name,
            'reservation_id': boot.reservation_id, 'flavor': boot.flavor,
            'image_ref': boot.image_ref,
            'availability_zone': boot.availability_zone,
            'metadata': instance.metadata}


def refusal(boot):
    """Why the request cannot be built here (None when it can)."""
    reasons = list(boot.unsupported)
    if (boot.group is not None and casts.SOFT_AFFINITY not in reasons
            and boot.group['policy'] not in server_group.POLICIES):
        reasons.append('a server group policy other than '
                       + ' and '.join(server_group.POLICIES))
    return '; '.join(reasons) or None


def spec_of(boot):
    """The request spec cellboot's flow reads, for a NovaBoot."""
    spec = {'flavor': boot.flavor, 'num_instances': len(boot.instances),
            'availability_zone': boot.availability_zone,
            'scheduler_hints': dict(boot.hints),
            'project_id': boot.project_id, 'user_id': boot.user_id}
    refused = refusal(boot)
    if refused:
        spec['refused'] = refused
    elif boot.group is not None:
        spec['scheduler_hints']['group'] = [boot.group['uuid']]
    return spec


def _server_group(context, boot, spec):
    """cellboot's group for the request's Nova group (None if none).

    Made under Nova's uuid on its first use. A group cellboot has under
    that uuid with another project or policy is not the request's: the
    cast is refused rather than the servers put in it.
    """
    wanted = boot.group
    if wanted is None or 'refused' in spec:
        return None
    if wanted['project_id'] not in (None, boot.project_id):
        raise primitives.Malformed(
            f'its server group {wanted["uuid"]} is of another project')
    try:
        group = server_group.ServerGroup.get_by_uuid(context,
                                                     wanted['uuid'])
    except exception.ServerGroupNotFound:
        name = (wanted['name'] or '').strip() or wanted['uuid']
        return server_group.ServerGroup.create(
            context, name, boot.project_id, wanted['policy'],
            user_id=boot.user_id, uuid=wanted['uuid'])
    if (group.project_id, group.policy) != (boot.project_id,
                                            wanted['policy']):
        raise primitives.Malformed(
            f'server group {wanted["uuid"]} is of another project or '
            f'policy in cellboot')
    return group


@api_db.writer
def accept(context, boot):
    """Write the request's rows, unless a delivery before did; payloads.

    Returns ``(build_requests, spec)`` as the flow's store wants them.
    """
    spec = spec_of(boot)
    instances = [(instance.uuid, _instance(boot, instance))
                 for instance in boot.instances]
    size = sum(accepted.stored_size(uuid, boot.project_id, boot.user_id,
                                    values, spec)
               for uuid, values in instances)
    if size > CONF.api.max_boot_payload_size:
        # As cellboot's API refuses it (413): no row of the flow's
        # store could hold it.
        raise primitives.Malformed(
            f'its {len(instances)} instance(s) take {size} bytes as '
            f'stored, over [api] max_boot_payload_size '
            f'({CONF.api.max_boot_payload_size})')
    known = instance_mapping.InstanceMapping.get_by_instance_uuids(
        context, boot.uuids)
    if known:
        # One transaction wrote them all: a redelivery finds every one,
        # of the same project. Anything else names instances it does
        # not own.
        if len(known) != len(boot.uuids) or any(
                mapping.project_id != boot.project_id
                for mapping in known.values()):
            raise primitives.Malformed(
                'it names instances that exist already and are not all '
                'this request\'s')
        return [accepted.payload(uuid, boot.project_id, boot.user_id,
                                 values) for uuid, values in instances], spec
    written = accepted.write(context, boot.project_id, boot.user_id,
                             instances, spec,
                             group=_server_group(context, boot, spec))
    metrics.boots_started(len(written))
    return written, spec


class NovaDoor:
    """Endpoint of nova-api's conductor topic (see the module)."""

    target = oslo_messaging.Target(namespace=casts.NAMESPACE,
                                   version=TARGET_VERSION)

    def __init__(self, manager):
        # The super conductor's manager: its runner starts the flows.
        self.manager = manager

    @oslo_messaging.expose
    def schedule_and_build_instances(self, context, build_requests,
                                     request_specs, image=None,
                                     admin_password=None,
                                     injected_files=None,
                                     requested_networks=None,
                                     block_device_mapping=None, tags=None,
                                     **later):
        """Build what nova-api accepted (cast); see the module."""
        build(self.manager, context, {
            'build_requests': build_requests,
            'request_specs': request_specs, 'image': image,
            'requested_networks': requested_networks,
            'block_device_mapping': block_device_mapping, 'tags': tags},
            'from nova-api')


def _accept(context, boot):
    what = f'accepting reservation {boot.reservation_id}'
    try:
        return outage.ride_out(lambda: accept(context, boot), what=what)
    except (exception.Conflict, db_exc.DBDuplicateEntry):
        # Another delivery of the request (a redelivered cast, the
        # mirror's recovery in another conductor) or another request of
        # the group wrote between our read and our write: read again.
        return outage.ride_out(lambda: accept(context, boot), what=what)


def build(manager, context, args, origin):
    """Read, accept and start one request of nova-api; whether it was
    taken (False: refused as not what nova-api sends, nothing written).

    ``args``: the cast's arguments (the admin password and injected
    files are never among them); ``origin`` says where they came from,
    in the log and the flow's description.
    """
    try:
        boot = casts.parse(args)
        if boot.project_id != context.project_id:
            raise primitives.Malformed(
                f'its instances are of project {boot.project_id}, '
                f'its context of {context.project_id}')
        if boot.ignored_hints:
            LOG.info('Request %s: scheduler hints cellboot does not read '
                     'are ignored: %s', context.request_id,
                     ', '.join(boot.ignored_hints))
        # The cast is not redelivered once taken: a database outage is
        # waited out here (``accept`` finds what an attempt whose answer
        # was lost wrote).
        payloads, spec = _accept(context, boot)
    except (primitives.Malformed, exception.Invalid) as exc:
        LOG.error('Request %s: refused a schedule_and_build_instances '
                  '%s that is not what nova-api sends; nothing is built: '
                  '%s', context.request_id, origin, exc)
        return False
    manager.runner.start(
        context,
        {'instance_uuids': boot.uuids,
         'build_requests': {entry['instance_uuid']: entry
                            for entry in payloads},
         'request_spec': spec},
        boot.uuids, FLOW_KEY_PREFIX + boot.reservation_id,
        f'Boot of {len(boot.uuids)} instance(s) {origin}, reservation '
        f'{boot.reservation_id}, request {context.request_id}')
    return True


def _refusing(method):
    @endpoint.expected_errors(exception.NotSupportedByCellboot)
    def refuse(self, context, **kwargs):
        raise exception.NotSupportedByCellboot(method=method)
    refuse.__name__ = method
    refuse.__doc__ = f'``{method}``: not supported by cellboot.'
    return oslo_messaging.expose(refuse)


# nova-api's other compute_task methods (Nova 34's ComputeTaskAPI).
NOT_SUPPORTED = ('build_instances', 'migrate_server',
                 'live_migrate_instance', 'unshelve_instance',
                 'rebuild_instance', 'cache_images',
                 'confirm_snapshot_based_resize',
                 'revert_snapshot_based_resize')

for _method in NOT_SUPPORTED:
    setattr(NovaDoor, _method, _refusing(_method))
