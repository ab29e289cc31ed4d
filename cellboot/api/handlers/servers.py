"""``/servers``: boot, list, show and delete servers."""

from oslo_log import log as logging
import oslo_messaging

from cellboot.api import auth
from cellboot.api import boot_requests
from cellboot.api import errors
from cellboot.api import handlers
from cellboot.api import pagination
from cellboot.api import schemas
from cellboot.api import server_filters
from cellboot.api.handlers import server_groups
from cellboot.api import server_records
from cellboot.api import server_sort
from cellboot.api import views
from cellboot.conf import CONF
from cellboot import exception
from cellboot.objects import flavor as flavor_obj
from cellboot.policies import servers as server_policies

LOG = logging.getLogger(__name__)


def _flavor(context, ref):
    """The flavor a request names by id (or by name); 400 if unknown."""
    try:
        return flavor_obj.Flavor.get_by_flavor_id(context, ref)
    except exception.FlavorNotFound:
        pass
    try:
        return flavor_obj.Flavor.get_by_name(context, ref)
    except exception.FlavorNotFound:
        raise errors.BadRequest(f'Flavor {ref} could not be found.')


def _group(context, hints):
    """The server group of the ``group`` hint; 400 if not the caller's."""
    uuid = hints.get('group')
    if uuid is None:
        return None
    group = server_groups.visible_group(context, uuid)
    if group is None:
        raise errors.BadRequest(f'Server group {uuid} could not be found.')
    return group


def _check_hints(context, hints):
    """403 for a hint the caller's policy does not allow.

    ``target_cell`` picks a cell, which only those who know the topology
    (administrators, by default) may do. ``same_host`` and
    ``different_host`` (and ``near``/``far``) need no rule: the
    scheduler resolves them within the request's project only.
    """
    if hints.get('target_cell'):
        auth.authorize(context, server_policies.CREATE_TARGET_CELL)


def _counts(server):
    """``(min_count, max_count)``: as many as the quota allows between."""
    min_count = server.get('min_count', 1)
    max_count = server.get('max_count', min_count)
    if min_count > max_count:
        raise errors.BadRequest(
            f'min_count ({min_count}) must not be greater than max_count '
            f'({max_count}).')
    return min_count, max_count


def create(api, request, context):
    body = schemas.validate(schemas.server_create(),
                            schemas.parse_json(request))
    server = body['server']
    hints = dict(body.get('os:scheduler_hints') or {})
    project_id = auth.owning_project(context)
    _check_hints(context, hints)
    min_count, max_count = _counts(server)
    flavor = _flavor(context, server['flavorRef'])
    group = _group(context, hints)
    flavor_values = {'flavorid': flavor.flavorid, 'name': flavor.name,
                     'vcpus': flavor.vcpus, 'memory_mb': flavor.memory_mb,
                     'root_gb': flavor.root_gb,
                     'extra_specs': dict(flavor.extra_specs or {})}
    instance, spec = boot_requests.describe(
        context, server['name'], flavor_values, count=max_count,
        image_ref=server.get('imageRef') or None,
        availability_zone=server.get('availability_zone'),
        metadata=server.get('metadata'), hints=hints, project_id=project_id)
    reservation_id = instance['reservation_id']
    boot_requests.check_size(context, max_count, instance, spec)
    # QuotaExceeded (403) when not even min_count fit: nothing written.
    build_requests, specs = boot_requests.persist(
        context, max_count, instance, spec, group=group,
        min_count=min_count)
    try:
        api.conductor.schedule_and_build_instances(context, build_requests,
                                                   specs)
    except oslo_messaging.MessageDeliveryFailure as exc:
        # Accepted all the same: the rows are the source of truth and
        # the sweeper starts builds nobody is working on. A broker that
        # is away is expected (a restart): one line, no traceback.
        LOG.warning('Could not cast the boot of %s (reservation %s) to the '
                    'super conductor (%s); it stays accepted and the super '
                    'conductors\' sweep starts it',
                    [br['instance_uuid'] for br in build_requests],
                    reservation_id, exc)
    except Exception:
        LOG.exception('Could not cast the boot of %s (reservation %s) to '
                      'the super conductor; it stays accepted',
                      [br['instance_uuid'] for br in build_requests],
                      reservation_id)
    uuids = [br['instance_uuid'] for br in build_requests]
    body = {'server': {'id': uuids[0], 'reservation_id': reservation_id,
                       'links': views.server_summary(
                           request, (uuids[0],))['links']}}
    if max_count > 1:
        body['reservation_id'] = reservation_id
        body['servers'] = [{'id': uuid} for uuid in uuids]
    return errors.json_response(202, body)


def _listed(context, request):
    """A page of the servers asked for and its ``servers_links``.

    The filters are checked before anything is read (400/403, see
    ``server_filters``); the page is read with them applied in each
    cell's query and to every record: in creation order by the API
    database's mappings, in another (or with deleted servers) merged
    from the cells (``server_sort``).
    """
    filters = server_filters.from_request(request, context)
    page = pagination.from_request(request)
    keep = filters.keeps if filters.any_record_filter() else None
    if filters.merged_from_cells():
        found = server_sort.list_servers(
            context, filters.project_id, filters.sort_key,
            CONF.api.list_cell_timeout, page.limit, marker=page.marker,
            keep=keep, where=filters.cell_clause(),
            descending=filters.descending,
            read_deleted=filters.changes_since is not None)
    else:
        found = server_records.list_servers(
            context, filters.project_id, CONF.api.list_cell_timeout,
            page.limit, marker=page.marker, keep=keep,
            where=filters.cell_clause(), descending=filters.descending)
    return found.records, pagination.links(request, 'servers', page,
                                           found.marker, found.more)


def index(api, request, context):
    try:
        records, links = _listed(context, request)
    except server_records.CellUnreachable as exc:
        # The marker's cell, read for its place in a sorted list.
        return handlers.unavailable(exc)
    return errors.json_response(200, dict({'servers': [
        views.server_summary(request, record) for record in records]},
        **links))


def detail(api, request, context):
    try:
        records, links = _listed(context, request)
    except server_records.CellUnreachable as exc:
        return handlers.unavailable(exc)
    return errors.json_response(200, dict({'servers': [
        views.server_detail(request, context, record)
        for record in records]}, **links))


def show(api, request, context, server_id):
    try:
        record = server_records.get(context, server_id)
    except server_records.CellUnreachable as exc:
        return handlers.unavailable(exc)
    return errors.json_response(
        200, {'server': views.server_detail(request, context, record)})


def delete(api, request, context, server_id):
    try:
        server_records.delete(context, server_id, api.scheduler)
    except (server_records.CellUnreachable,
            server_records.DeleteNotFinished) as exc:
        return handlers.unavailable(exc)
    return errors.json_response(204)
