"""Reading the resource tables: inventories, usages, allocations.

Of one cell: the targeted cell's database, or the service's own
(``tables``).

Two kinds of readers live here. The decorated public functions
(``get_usages``, ``get_inventories``, ``get_allocations_for_consumer``,
``load_all``) each run one read transaction for callers outside the
scheduler's writes. ``read_inventories`` and ``read_usages`` take no
transaction of their own: the claims and provider updates call them inside
their write transaction, after they have read the provider's generation
(see ``contention``).
"""

import sqlalchemy as sa

from cellboot.db.cell import models as cell_models
from cellboot.scheduler.resources import inventory
from cellboot.scheduler.resources import tables

_PROVIDERS = tables.PROVIDERS
_INVENTORIES = tables.INVENTORIES
_ALLOCATIONS = tables.ALLOCATIONS

INVENTORY_COLUMNS = [_INVENTORIES.c[field] for field in inventory.FIELDS]

# Rows per chunk of a full load: large enough that the round trips and
# the per-chunk numpy calls do not count, small enough that a chunk of
# rows (a few MB) is nothing next to the host states.
LOAD_CHUNK_ROWS = 10000


def inventory_dict(row):
    return {field: row._mapping[field] for field in inventory.FIELDS}


def _where_uuids(query, provider_uuids):
    if provider_uuids is None:
        return query
    return query.where(_PROVIDERS.c.uuid.in_(list(provider_uuids)))


def _per_provider_reads(store):
    inventories, allocations = store.inventories, store.allocations
    columns = [inventories.c[field] for field in inventory.FIELDS]
    of_provider = sa.select(inventories.c.resource_class, *columns).where(
        inventories.c.resource_provider_id == sa.bindparam('provider_id'))
    usages = sa.select(
        allocations.c.resource_class,
        sa.func.sum(allocations.c.used),
        sa.func.sum(sa.case(
            (allocations.c.consumer_id == sa.bindparam('consumer_uuid'),
             allocations.c.used), else_=0)),
    ).where(
        allocations.c.resource_provider_id == sa.bindparam('provider_id'),
    ).group_by(allocations.c.resource_class)
    return of_provider, usages


# The per-provider reads run in every claim. They are built once per
# store (a cell's database, the API's pools), with bound parameters:
# building a statement costs more Python time than SQLite takes to run
# it.
_READS = {store: _per_provider_reads(store)
          for store in (tables.CELL, tables.API)}


def read_inventories(context, provider_id, store=tables.CELL):
    """``{rc: inventory}`` of one provider, in the caller's transaction."""
    rows = context.session.execute(_READS[store][0],
                                   {'provider_id': provider_id})
    return {row.resource_class: inventory_dict(row) for row in rows}


def read_usages(context, provider_id, consumer_uuid=None,
                store=tables.CELL):
    """``({rc: used}, {rc: held})`` of one provider.

    ``used`` sums every consumer; ``held`` is what ``consumer_uuid`` holds
    itself (empty without a consumer: ``= NULL`` matches nothing). One
    query, in the caller's transaction.
    """
    rows = context.session.execute(_READS[store][1], {
        'provider_id': provider_id, 'consumer_uuid': consumer_uuid})
    used, held = {}, {}
    for rc, total_used, consumer_used in rows:
        used[rc] = int(total_used)
        if consumer_used:
            held[rc] = int(consumer_used)
    return used, held


@tables.reader
def get_inventories(context, provider_uuids=None):
    """``{provider_uuid: {rc: inventory}}``; every selected provider."""
    query = sa.select(
        _PROVIDERS.c.uuid, _INVENTORIES.c.resource_class,
        *INVENTORY_COLUMNS,
    ).select_from(_PROVIDERS.outerjoin(
        _INVENTORIES,
        _INVENTORIES.c.resource_provider_id == _PROVIDERS.c.id))
    result = {}
    for row in context.session.execute(_where_uuids(query, provider_uuids)):
        invs = result.setdefault(row.uuid, {})
        if row.resource_class is not None:
            invs[row.resource_class] = inventory_dict(row)
    return result


@tables.reader
def get_usages(context, provider_uuids=None):
    """``{provider_uuid: {rc: used}}``; every selected provider.

    Each resource class of a provider's inventory is present, 0 when
    nothing is allocated, so callers can subtract without ``.get``.
    """
    classes = sa.select(
        _PROVIDERS.c.uuid, _INVENTORIES.c.resource_class,
    ).select_from(_PROVIDERS.outerjoin(
        _INVENTORIES,
        _INVENTORIES.c.resource_provider_id == _PROVIDERS.c.id))
    sums = sa.select(
        _PROVIDERS.c.uuid, _ALLOCATIONS.c.resource_class,
        sa.func.sum(_ALLOCATIONS.c.used),
    ).select_from(_ALLOCATIONS.join(
        _PROVIDERS, _PROVIDERS.c.id == _ALLOCATIONS.c.resource_provider_id,
    )).group_by(_PROVIDERS.c.uuid, _ALLOCATIONS.c.resource_class)
    result = {}
    for uuid, rc in context.session.execute(
            _where_uuids(classes, provider_uuids)):
        usages = result.setdefault(uuid, {})
        if rc is not None:
            usages[rc] = 0
    for uuid, rc, used in context.session.execute(
            _where_uuids(sums, provider_uuids)):
        result.setdefault(uuid, {})[rc] = int(used)
    return result


@tables.reader
def get_allocations_for_consumer(context, consumer_uuid):
    """``{provider_uuid: {rc: used}}`` held by one consumer."""
    query = sa.select(
        _PROVIDERS.c.uuid, _ALLOCATIONS.c.resource_class,
        _ALLOCATIONS.c.used,
    ).select_from(_ALLOCATIONS.join(
        _PROVIDERS, _PROVIDERS.c.id == _ALLOCATIONS.c.resource_provider_id,
    )).where(_ALLOCATIONS.c.consumer_id == consumer_uuid)
    result = {}
    for uuid, rc, used in context.session.execute(query):
        by_rc = result.setdefault(uuid, {})
        by_rc[rc] = by_rc.get(rc, 0) + used
    return result


# What a full load reads; see load_all for the shape of the rows.
_ALL_PROVIDERS = sa.select(
    _PROVIDERS.c.id, _PROVIDERS.c.uuid, _PROVIDERS.c.name,
    _PROVIDERS.c.availability_zone, _PROVIDERS.c.generation)

_ALL_INVENTORIES = sa.select(
    _INVENTORIES.c.resource_provider_id.label('provider_id'),
    _INVENTORIES.c.resource_class, *INVENTORY_COLUMNS)

_ALL_TRAITS = sa.select(
    tables.PROVIDER_TRAITS.c.resource_provider_id.label('provider_id'),
    tables.PROVIDER_TRAITS.c.trait)

_ALL_USAGES = sa.select(
    _ALLOCATIONS.c.resource_provider_id.label('provider_id'),
    _ALLOCATIONS.c.resource_class,
    # MySQL sums integers to DECIMAL; the cache wants plain ints.
    sa.cast(sa.func.sum(_ALLOCATIONS.c.used), sa.Integer).label('used'),
).group_by(_ALLOCATIONS.c.resource_provider_id,
           _ALLOCATIONS.c.resource_class)


@tables.reader
def load_all(context, sink, chunk_rows=LOAD_CHUNK_ROWS):
    """Stream everything the host states start from into ``sink``.

    100,000 providers are 400,000 provider and inventory rows: as Python
    rows all at once they cost several times the host states built from
    them (about 190 MB through PyMySQL). So the rows are read through a
    server-side cursor (PyMySQL's unbuffered cursor, a psycopg2 named
    cursor; sqlite3 steps through its results anyway) and handed over in
    lists of at most ``chunk_rows``, each dropped before the next is read:

    * ``sink.add_providers(rows)``: ``(id, uuid, name,
      availability_zone, generation)`` (every provider of the cell's
      database is one of the cell's hosts);
    * then ``sink.add_inventories(rows)``: ``(provider_id,
      resource_class, total, reserved, allocation_ratio, min_unit,
      max_unit, step_size)``;
    * then ``sink.add_usages(rows)``: ``(provider_id, resource_class,
      used)``, summed over consumers; a class with nothing allocated has
      no row;
    * then ``sink.add_traits(rows)``: ``(provider_id, trait)``.

    Rows are tuple-like (index or attribute access); ``provider_id``
    refers to a provider's ``id``, cheaper to join on in memory than its
    uuid. Four queries without joins between the large tables. On MySQL
    (REPEATABLE READ) and SQLite (a WAL snapshot) they read one snapshot;
    on PostgreSQL (READ COMMITTED) they may be a few commits apart, so an
    inventory may name a provider that was not read: sinks skip those.
    That is good enough for a cache: every claim is checked again in the
    database.
    """
    session = context.session
    for query, add in ((_ALL_PROVIDERS, sink.add_providers),
                       (_ALL_INVENTORIES, sink.add_inventories),
                       (_ALL_USAGES, sink.add_usages),
                       (_ALL_TRAITS, sink.add_traits)):
        result = session.execute(
            query.execution_options(yield_per=chunk_rows))
        for rows in result.partitions():
            add(rows)


_INSTANCES = cell_models.Instance.__table__


@tables.reader
def consumers_without_live_instance(context, older_than, limit):
    """Consumers holding claims in the cell that no instance should hold.

    Their instance row is soft-deleted; or in ERROR since before
    ``older_than`` (ERROR holds no claim: whoever set it releases them
    next, and may have died in between); or absent, with allocations
    older than ``older_than`` (a boot's claim comes before its instance
    row, so a young claim without a row is a boot in flight). What a
    delete, a failure or a move that stopped half-way left.

    Returns ``{consumer uuid: 'deleted' | 'error' | 'absent'}``, at most
    ``limit`` of them.
    """
    live = sa.exists().where(
        _INSTANCES.c.uuid == _ALLOCATIONS.c.consumer_id,
        _INSTANCES.c.deleted == sa.false(),
        sa.or_(_INSTANCES.c.vm_state != 'error',
               _INSTANCES.c.updated_at >= older_than))
    present = sa.exists().where(
        _INSTANCES.c.uuid == _ALLOCATIONS.c.consumer_id)
    consumers = sa.select(_ALLOCATIONS.c.consumer_id).where(
        ~live, sa.or_(present, _ALLOCATIONS.c.created_at < older_than),
    ).distinct().limit(limit).subquery()
    rows = context.session.execute(sa.select(
        consumers.c.consumer_id, _INSTANCES.c.deleted,
    ).select_from(consumers.outerjoin(
        _INSTANCES, _INSTANCES.c.uuid == consumers.c.consumer_id)))
    return {uuid: ('absent' if deleted is None
                   else 'deleted' if deleted else 'error')
            for uuid, deleted in rows}


_NODES = cell_models.ComputeNode.__table__


@tables.reader
def claims_off_host(context, limit):
    """Claims that settled instances hold on a provider not their host's.

    An instance that is ACTIVE with no task under way holds claims on
    the provider of its host's node alone. A claim on another provider
    is one a message re-made after the instance had left that host: a
    RabbitMQ restart delivers again what a service had taken but not
    acknowledged, and a scheduler may run a request whose caller has
    given up on it and moved on. No path of cellboot moves a settled
    instance, so such a claim cannot be one in flight.

    Returns ``[(consumer uuid, provider uuid)]``, at most ``limit``.
    """
    own = sa.exists().where(
        _NODES.c.uuid == _PROVIDERS.c.uuid,
        _NODES.c.host == _INSTANCES.c.host,
        _NODES.c.hypervisor_hostname == _INSTANCES.c.node)
    query = sa.select(
        _ALLOCATIONS.c.consumer_id, _PROVIDERS.c.uuid,
    ).select_from(
        _ALLOCATIONS.join(
            _PROVIDERS,
            _PROVIDERS.c.id == _ALLOCATIONS.c.resource_provider_id,
        ).join(_INSTANCES, _INSTANCES.c.uuid == _ALLOCATIONS.c.consumer_id)
    ).where(
        _INSTANCES.c.deleted == sa.false(),
        _INSTANCES.c.vm_state == 'active',
        _INSTANCES.c.task_state.is_(None),
        ~own,
    ).distinct().limit(limit)
    return sorted((consumer, provider) for consumer, provider
                  in context.session.execute(query))
