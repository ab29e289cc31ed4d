"""Cell mapping operations behind ``cellboot-manage cell_v2``.

These are plain functions on a context, returning objects and raising
domain errors, so that other set-up code (``cellboot all-in-one``) can
map cells the way an operator does. The command handlers in
``cellboot.cmd.manage.cell_v2`` only print their results and choose exit
codes.

Every function that writes checks first what can be checked (the URLs
parse, the database answers, the name is free) so that a refusal leaves
the API database as it was.
"""

import os
from importlib import metadata
from urllib import parse

from oslo_config import cfg

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db.api import connection as api_db
from cellboot.db import facade
from cellboot import exception
from cellboot import masking
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.objects import host_mapping as host_mapping_obj
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_mapping as instance_mapping_obj
from cellboot.objects import zone as zone_obj

CellMapping = cell_mapping_obj.CellMapping
HostMapping = host_mapping_obj.HostMapping
InstanceMapping = instance_mapping_obj.InstanceMapping

CELL0_NAME = 'cell0'
# cell0 has no services, so no message bus; nova writes the same URL.
CELL0_TRANSPORT_URL = 'none:///'

# What verify_instance finds (the command turns them into exit codes).
MAPPED = 'mapped'
NOT_MAPPED = 'not mapped'
NO_CELL = 'mapped without a cell'
DELETED = 'deleted'
ARCHIVED = 'archived'

# ``update_cell``'s zone when the cell is to stay where it is.
KEEP_ZONE = object()


def default_transport_url():
    """``[DEFAULT] transport_url``, or None if nothing registers it.

    The option is oslo.messaging's; ``cellboot.rpc`` registers it (with
    the embedded default, ``fake://``) and is imported only here, by the
    commands that map a cell, to spare the others oslo.messaging's import.
    """
    from cellboot import rpc  # noqa: F401 (registers the option)
    try:
        return CONF.transport_url
    except cfg.NoSuchOptError:
        return None


def cell0_url_from_api_url(api_url):
    """cell0's database URL next to the API database's.

    An SQLite file ``X.sqlite`` gets ``X_cell0.sqlite`` in the same
    directory; a server database ``D`` gets ``D_cell0`` on the same server
    with the same credentials, as nova-manage does.
    """
    url = facade.parse_url(api_url)
    name = url.database
    if not name or name == ':memory:':
        raise exception.InvalidDatabaseURL(
            url=masking.mask_url(api_url),
            reason='an in-memory API database has no place for cell0; '
                   'give --database_connection')
    if url.get_backend_name() == 'sqlite':
        root, ext = os.path.splitext(name)
        name = f'{root}_cell0{ext}'
    else:
        name = f'{name}_cell0'
    return url.set(database=name).render_as_string(hide_password=False)


def validate_transport_url(url):
    """Raise InvalidTransportURL unless oslo.messaging can use ``url``.

    oslo.messaging only notices an unknown driver when it makes a
    transport, long after the mapping is written; its drivers are the
    entry points checked here. A URL without ``scheme://`` is not echoed,
    as nothing tells where its password is.
    """
    if not url or '://' not in url:
        raise exception.InvalidTransportURL(
            url='<hidden>' if url else url,
            reason='it must look like rabbit://user:password@host:5672/')
    driver = parse.urlsplit(url).scheme.partition('+')[0]
    drivers = sorted(ep.name for ep in metadata.entry_points(
        group='oslo.messaging.drivers'))
    if driver not in drivers:
        raise exception.InvalidTransportURL(
            url=masking.mask_url(url),
            reason=f'the scheme must be one of {", ".join(drivers)}')
    from cellboot.rpc import buses
    buses.of_url(url)  # the rest of it parses, as a transport's will


def check_database(url):
    """Raise unless ``url`` parses and its database accepts connections.

    A new SQLite file is created empty; a server database must exist
    already (``db sync`` makes the tables, not the database).
    """
    # Imported here: it imports TaskFlow, which costs the commands that
    # never check a database half a second.
    from cellboot.db import migration
    migration.db_version('cell', url)


def map_cell0(context, database_connection=None):
    """Map cell0; return ``(cell_mapping, created)``.

    Idempotent: an existing cell0 is returned as it is, also when another
    ``map_cell0`` created it a moment ago.
    """
    try:
        return CellMapping.get_by_uuid(context,
                                       cell_mapping_obj.CELL0_UUID), False
    except exception.CellMappingNotFound:
        pass
    url = database_connection or cell0_url_from_api_url(
        CONF.api_database.connection)
    check_database(url)
    try:
        cell0 = CellMapping.create(
            context, name=CELL0_NAME, database_connection=url,
            transport_url=CELL0_TRANSPORT_URL,
            uuid=cell_mapping_obj.CELL0_UUID)
    except exception.CellMappingUuidExists:
        return CellMapping.get_by_uuid(context,
                                       cell_mapping_obj.CELL0_UUID), False
    return cell0, True


def create_cell(context, name, database_connection, transport_url,
                disabled=False, allow_shared_transport=False, zone=None):
    """Map a new cell after checking everything a mapping depends on.

    ``zone`` (uuid or name) is the zone the cell sits in, None for the
    top level. Raises what ``check_new_cell`` raises, ZoneNotFound;
    CellMappingExists too when another run took the name in the meantime.
    """
    zone_uuid = None if zone is None else zone_obj.get(context, zone).uuid
    check_new_cell(context, name, database_connection, transport_url,
                   allow_shared_transport=allow_shared_transport)
    return CellMapping.create(context, name=name,
                              database_connection=database_connection,
                              transport_url=transport_url, disabled=disabled,
                              zone_uuid=zone_uuid)


def update_cell(context, ident, name=None, database_connection=None,
                transport_url=None, zone=KEEP_ZONE,
                allow_shared_transport=False, disabled=None):
    """Change a mapped cell (uuid or name ``ident``); return it.

    Only what is given changes; ``zone`` is a zone's uuid or name, None to
    put the cell back at the top level; ``disabled`` True or False stops
    or resumes new instances going to the cell (cell0 takes none anyway,
    and stays as it is). Every check runs before anything
    is written, as ``check_new_cell``'s do: CellMappingNotFound,
    ZoneNotFound, Cell0Unchangeable (cell0's name and zone),
    CellMappingExists, CellDatabaseInUse, CellTransportShared, and the
    URL errors.
    """
    cell = CellMapping.get_by_uuid_or_name(context, ident)
    others = [other for other in CellMapping.get_all(context)
              if other.uuid != cell.uuid]
    values = {}
    if name is not None and name != cell.name:
        if cell.is_cell0:
            raise exception.Cell0Unchangeable(what='another name')
        if not name.strip():
            raise exception.Invalid(reason='a cell needs a non-empty --name')
        if name == CELL0_NAME or any(other.name == name for other in others):
            raise exception.CellMappingExists(name=name)
        values['name'] = name
    if zone is not KEEP_ZONE:
        zone_uuid = None if zone is None else zone_obj.get(context,
                                                           zone).uuid
        if cell.is_cell0 and zone_uuid is not None:
            raise exception.Cell0Unchangeable(what='a zone')
        values['zone_uuid'] = zone_uuid
    if transport_url is not None \
            and transport_url != cell.transport_url:
        validate_transport_url(transport_url)
        if not allow_shared_transport:
            check_own_bus(values.get('name', cell.name), transport_url,
                          others)
        values['transport_url'] = transport_url
    if database_connection is not None \
            and database_connection != cell.database_connection:
        facade.parse_url(database_connection)
        for other in others:
            if other.database_connection == database_connection:
                raise exception.CellDatabaseInUse(
                    cell=f'{other.name} ({other.uuid})',
                    url=masking.mask_url(database_connection))
        check_database(database_connection)
        values['database_connection'] = database_connection
    if disabled is not None and bool(disabled) != bool(cell.disabled):
        if cell.is_cell0:
            raise exception.Cell0Unchangeable(
                what='another state (enabled or disabled)')
        values['disabled'] = bool(disabled)
    if values:
        cell.update(context, **values)
    return cell


def check_new_cell(context, name, database_connection, transport_url,
                   allow_shared_transport=False):
    """Raise what would make ``create_cell`` refuse; write nothing.

    CellMappingExists for a taken name (``cell0`` is reserved),
    CellDatabaseInUse when another cell already has the database,
    CellTransportShared when the transport URL names the API's bus or
    another cell's (unless ``allow_shared_transport``),
    InvalidDatabaseURL/DatabaseConnectionError when the database cannot
    be used, InvalidTransportURL for a URL no driver understands.
    """
    if not name or not name.strip():
        raise exception.Invalid(reason='a cell needs a non-empty --name')
    if name == CELL0_NAME:
        raise exception.CellMappingExists(name=name)
    facade.parse_url(database_connection)
    validate_transport_url(transport_url)
    existing = CellMapping.get_all(context)
    for cell in existing:
        if cell.name == name:
            raise exception.CellMappingExists(name=name)
        if cell.database_connection == database_connection:
            raise exception.CellDatabaseInUse(
                cell=f'{cell.name} ({cell.uuid})',
                url=masking.mask_url(database_connection))
    if not allow_shared_transport:
        check_own_bus(name, transport_url, existing)
    check_database(database_connection)


def check_own_bus(name, transport_url, cells):
    """Raise CellTransportShared unless ``transport_url`` is a new bus.

    What a request to the scheduler may touch is decided by the bus it
    arrives on (``cellboot.scheduler.access``): a cell on the API's bus
    reaches the scheduler with the API level's rights, and cells on one
    bus can send to each other's topics. URLs are compared as buses
    (``cellboot.rpc.buses``): credentials, host aliases, default ports
    and vhost spellings do not make another bus.
    """
    from cellboot.rpc import buses
    bus = buses.of_url(transport_url)
    masked = masking.mask_url(transport_url)
    api_url = default_transport_url()
    if api_url and bus.same_as(buses.of_url(api_url)):
        raise exception.CellTransportShared(
            url=masked, name=name,
            other='the API level ([DEFAULT] transport_url)',
            consequence='the cell\'s services would call the scheduler '
                        'there with the API level\'s rights, on every '
                        'cell\'s providers and instances')
    for cell in cells:
        if cell.is_cell0:
            continue
        try:
            other = buses.of_url(cell.transport_url)
        except exception.InvalidTransportURL:
            continue  # a broken mapping is nobody's bus
        if bus.same_as(other):
            raise exception.CellTransportShared(
                url=masked, name=name, other=f'cell {cell.name} '
                                             f'({cell.uuid})',
                consequence='the services of cells that share a bus can '
                            'act for each other')


def delete_cell(context, cell, force=False):
    """Unmap a cell; return ``(cell, hosts_unmapped, instances_unmapped)``.

    ``cell`` is the cell's uuid or name.
    Without ``force`` a cell that still has host or instance mappings is
    refused (CellHasHostMappings, CellHasInstanceMappings), and so is
    cell0 (Cell0Protected). With ``force`` its mappings go too. Checks
    and deletes share one transaction: a host mapped meanwhile either
    blocks the delete or is deleted with it, never left dangling.
    """
    return _delete_cell(context, cell, force)


@api_db.writer
def _delete_cell(context, ident, force):
    cell = CellMapping.get_by_uuid_or_name(context, ident)
    if cell.is_cell0 and not force:
        raise exception.Cell0Protected()
    label = f'{cell.name} ({cell.uuid})'
    if force:
        hosts = HostMapping.destroy_by_cell(context, cell.uuid)
        instances = InstanceMapping.destroy_by_cell(context, cell.uuid)
    else:
        hosts = HostMapping.count_by_cell(context, cell.uuid)
        if hosts:
            raise exception.CellHasHostMappings(cell=label, count=hosts)
        instances = InstanceMapping.count_by_cell(context, cell.uuid)
        if instances:
            raise exception.CellHasInstanceMappings(cell=label,
                                                    count=instances)
    try:
        cell.destroy(context)
    except exception.CellHasResources:
        if not force:
            raise
        # Only the scheduler's resource providers can be left: --force
        # does not delete what the scheduler owns.
        raise exception.CellHasResources(
            message=f'Cell {label} still has resource providers, which '
                    f'--force does not delete: the scheduler owns them.')
    return cell, hosts, instances


def verify_instance(context, instance_uuid):
    """Where an instance is; return ``(status, instance_mapping)``.

    ``status`` is MAPPED (in a cell, not deleted), NOT_MAPPED (no
    mapping), NO_CELL (only a build request so far), DELETED (soft
    deleted in its cell) or ARCHIVED (its cell no longer has the row).
    """
    try:
        mapping = InstanceMapping.get_by_instance_uuid(context,
                                                       instance_uuid)
    except exception.InstanceMappingNotFound:
        return NOT_MAPPED, None
    if mapping.cell_mapping is None:
        return NO_CELL, mapping
    with cb_context.target_cell(context, mapping.cell_mapping) as cctxt:
        try:
            instance = instance_obj.Instance.get_by_uuid(
                cctxt, instance_uuid, read_deleted=True)
        except exception.InstanceNotFound:
            return ARCHIVED, mapping
    if instance.deleted:
        return DELETED, mapping
    return MAPPED, mapping
