"""Moving a deployment's host resources out of the API database.

Before cell revision ``d41c7e2a9b10`` the compute hosts' resource
providers, their inventories and their servers' allocations were rows of
the API database, each provider tagged with its cell (``cell_id``). The
cell schedulers keep them in the cell's own database (``resources.
tables``) and never read the API's, so an older deployment has them moved
once, by ``cellboot-manage scheduler migrate_to_cells``. Cell by cell, a
batch of providers at a time:

1. read the batch from the API database;
2. in one cell transaction, insert what the cell lacks: a provider unknown
   by uuid, with its inventories, generation and stamps; then the
   allocations of each consumer that holds nothing on it in the cell. A
   provider the cell has (its host reported to a new scheduler) keeps its
   row and inventories, the newer report, and gets the consumers it lacks
   (its generation moves on). Consumer by consumer, not class by class: a
   claim replaces a consumer's allocations as a whole, so a consumer found
   in the cell holds a newer claim that old rows must not be mixed into;
3. in one API transaction, lock the batch's providers, check that their
   generations are those read in 1, and delete them with their rows.

Each step looks at what is there, not at what a run did, and nothing
leaves the API database before its copy is committed: a run stopped
after 2 leaves rows in both, and the next finds them in the cell, copies
nothing and deletes them from the API database. Two runs at once copy
nothing twice (2 locks what it reads). Left in the API database, and
reported: a provider whose name another has in the cell; one that changed
between 1 and 3; the rest of a cell whose database fails (the other cells
are moved); those of no mapped cell or of cell0, which no cell takes.

The schedulers must be stopped during the move (cellboot-scheduler, the
super conductors, the API; an all-in-one process runs them all): 3 only
catches writes to the API rows, and a running cell scheduler would not
see the moved allocations arrive. Compute hosts may keep running: they
reach their resources only through a scheduler and report again at their
next heartbeat. Started after the move, the cell schedulers load the
moved rows like any others.
"""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from cellboot.console import output
from cellboot import context as cb_context
from cellboot.db.api import connection as api_db
from cellboot.db.api import models as api_models
from cellboot.db import batches
from cellboot.db import retry
from cellboot import exception
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.scheduler.resources import inventory
from cellboot.scheduler.resources import tables

# Providers per transaction: a host's consumers come with it, so a batch
# is a few thousand rows at most.
BATCH = batches.CHUNK_SIZE

_API_PROVIDERS = api_models.ResourceProvider.__table__
_API_INVENTORIES = api_models.Inventory.__table__
_API_ALLOCATIONS = api_models.Allocation.__table__
_CELLS = api_models.CellMapping.__table__

_STAMPS = ('created_at', 'updated_at')
_PROVIDER_FIELDS = ('uuid', 'name', 'availability_zone', 'generation'
                    ) + _STAMPS
_INVENTORY_FIELDS = ('resource_class',) + inventory.FIELDS + _STAMPS
_ALLOCATION_FIELDS = ('consumer_id', 'resource_class', 'used') + _STAMPS

# What a cell database that fails raises; its cell is reported, the
# others are moved.
_CELL_ERRORS = (db_exc.DBError, sa.exc.SQLAlchemyError,
                exception.CellbootException)

CHANGED = ('it changed in the API database while it was being moved: is a '
           'scheduler still running? Stop it and run the command again')


class CellMove:
    """What the move did in one cell; what ``progress`` is given.

    ``total``: the cell's providers in the API database at its turn;
    ``providers``: those moved, ``present`` of them in the cell already;
    ``inventories``, ``allocations``: rows copied; ``skipped``: {provider
    uuid: why it was left}; ``failure``: why the rest of the cell was left
    (its database failed); ``done``: the cell's turn is over.
    """

    def __init__(self, cell, total):
        self.cell, self.total = cell, total
        self.providers = self.present = self.inventories = 0
        self.allocations = 0
        self.skipped, self.failure, self.done = {}, None, False

    @property
    def ok(self):
        return self.failure is None and not self.skipped


class Summary:
    """``cells``: a CellMove per cell; ``unplaced``: {provider uuid: why
    no cell takes it}; ``left``: providers in the API database after."""

    def __init__(self, cells, unplaced, left):
        self.cells, self.unplaced, self.left = cells, unplaced, left

    @property
    def ok(self):
        """Nothing that could have been moved was left behind."""
        return all(move.ok for move in self.cells)


@api_db.reader
def pending(context, cell_id=None):
    """How many host resource providers the API database still holds.

    All of them, or those of the cell with id ``cell_id``. Shared pools
    (``is_pool``) belong there and are not counted: they are no host.
    """
    query = sa.select(sa.func.count()).select_from(_API_PROVIDERS).where(
        _API_PROVIDERS.c.is_pool == sa.false())
    if cell_id is not None:
        query = query.where(_API_PROVIDERS.c.cell_id == cell_id)
    return context.session.execute(query).scalar()


@api_db.reader
def _unplaced(context):
    """{uuid: why} of the providers that no cell database takes."""
    rows = context.session.execute(sa.select(
        _API_PROVIDERS.c.uuid, _API_PROVIDERS.c.name,
        _API_PROVIDERS.c.cell_id, _CELLS.c.uuid.label('cell_uuid'),
    ).select_from(_API_PROVIDERS.outerjoin(
        _CELLS, _CELLS.c.id == _API_PROVIDERS.c.cell_id,
    )).where(sa.or_(_CELLS.c.id.is_(None),
                    _CELLS.c.uuid == cell_mapping_obj.CELL0_UUID),
             _API_PROVIDERS.c.is_pool == sa.false(),
             ).order_by(_API_PROVIDERS.c.id))
    reasons = {}
    for row in rows:
        if row.cell_id is None:
            why = 'it has no cell'
        elif row.cell_uuid is None:
            why = f'its cell (id {row.cell_id}) is not mapped'
        else:
            why = 'it is in cell0, which has no hosts'
        reasons[row.uuid] = f'host {row.name}: {why}'
    return reasons


def _rows_of(session, table, provider_ids, fields):
    """``(provider id, {field: value})`` of the providers' rows in table."""
    for row in session.execute(sa.select(table).where(
            table.c.resource_provider_id.in_(provider_ids),
    ).order_by(table.c.id)):
        yield row.resource_provider_id, {f: row._mapping[f] for f in fields}


@api_db.reader
def _read_batch(context, cell_id, after, limit):
    """Step 1: up to ``limit`` of the cell's providers past id ``after``.

    Dicts of their columns, ``inventories`` ([row dicts]) and
    ``allocations`` ({consumer: [row dicts]}): a consumer's rows are
    copied together, all or none, as they are.
    """
    session = context.session
    providers = {row.id: dict(row._mapping, inventories=[], allocations={})
                 for row in session.execute(sa.select(_API_PROVIDERS).where(
                     _API_PROVIDERS.c.cell_id == cell_id,
                     _API_PROVIDERS.c.id > after,
                 ).order_by(_API_PROVIDERS.c.id).limit(limit))}
    if not providers:
        return []
    ids = list(providers)
    for pid, inv in _rows_of(session, _API_INVENTORIES, ids,
                             _INVENTORY_FIELDS):
        providers[pid]['inventories'].append(inv)
    for pid, alloc in _rows_of(session, _API_ALLOCATIONS, ids,
                               _ALLOCATION_FIELDS):
        providers[pid]['allocations'].setdefault(
            alloc.pop('consumer_id'), []).append(alloc)
    return list(providers.values())


def _copy_provider(session, provider):
    """Step 2 for one provider: ``(inventories, allocations, present)``
    copied, or the conflict's reason (a str)."""
    cp, ca = tables.PROVIDERS, tables.ALLOCATIONS
    # Locked: a concurrent run waits here, then sees what this one wrote.
    row = session.execute(sa.select(cp.c.id).where(
        cp.c.uuid == provider['uuid']).with_for_update()).first()
    inventories = 0
    if row is None:
        other = session.execute(sa.select(cp.c.uuid).where(
            cp.c.name == provider['name'])).scalar()
        if other is not None:
            return (f'host {provider["name"]}: the cell database has '
                    f'provider {other} of that name (did the host report '
                    f'a new compute node?); settle which one is the '
                    f"host's node, then run the command again")
        provider_id = session.execute(sa.insert(cp).values(
            {field: provider[field] for field in _PROVIDER_FIELDS})
        ).inserted_primary_key[0]
        inventories = len(provider['inventories'])
        if inventories:
            session.execute(sa.insert(tables.INVENTORIES), [
                dict(inv, resource_provider_id=provider_id)
                for inv in provider['inventories']])
    else:
        provider_id = row.id
    # A locking read: it sees what a concurrent run committed meanwhile,
    # also under MySQL's repeatable read.
    held = set(session.execute(sa.select(ca.c.consumer_id).where(
        ca.c.resource_provider_id == provider_id).with_for_update(),
    ).scalars())
    new = [dict(alloc, consumer_id=consumer,
                resource_provider_id=provider_id)
           for consumer, allocs in provider['allocations'].items()
           if consumer not in held for alloc in allocs]
    if new:
        session.execute(sa.insert(ca), new)
        if row is not None:
            session.execute(sa.update(cp).where(cp.c.id == provider_id)
                            .values(generation=cp.c.generation + 1))
    return inventories, len(new), row is not None


@retry.on_duplicate
@retry.on_contention
@tables.writer
def _copy_to_cell(cctxt, providers):
    """Step 2 for a batch, in the targeted cell: ``{uuid: result}``."""
    return {provider['uuid']: _copy_provider(cctxt.session, provider)
            for provider in providers}


@retry.on_contention
@api_db.writer
def _delete_from_api(context, generations):
    """Step 3: delete the providers ``{id: generation read}`` with their
    rows; the ids of those whose generation moved on, which are kept."""
    session = context.session
    ids = sorted(generations)
    now = dict(session.execute(sa.select(
        _API_PROVIDERS.c.id, _API_PROVIDERS.c.generation,
    ).where(_API_PROVIDERS.c.id.in_(ids)).with_for_update()).all())
    # One that is gone was moved by a concurrent run.
    same = [pid for pid in ids if now.get(pid) == generations[pid]]
    if same:
        for table in (_API_ALLOCATIONS, _API_INVENTORIES):
            session.execute(sa.delete(table).where(
                table.c.resource_provider_id.in_(same)))
        session.execute(sa.delete(_API_PROVIDERS).where(
            _API_PROVIDERS.c.id.in_(same)))
    return {pid for pid in ids if pid in now and pid not in same}


def _move_cell(context, cctxt, move, batch, progress):
    after = 0
    while True:
        providers = _read_batch(context, move.cell.id, after, batch)
        if not providers:
            return
        after = providers[-1]['id']
        try:
            copied = _copy_to_cell(cctxt, providers)
        except _CELL_ERRORS as exc:
            move.failure = (output.describe(exc)
                            or f'{type(exc).__name__}: {exc}')
            return
        moving = [p for p in providers
                  if not isinstance(copied[p['uuid']], str)]
        changed = _delete_from_api(context, {
            p['id']: p['generation'] for p in moving}) if moving else ()
        for provider in providers:
            result = copied[provider['uuid']]
            if isinstance(result, str):
                move.skipped[provider['uuid']] = result
            elif provider['id'] in changed:
                move.skipped[provider['uuid']] = CHANGED
            else:
                move.providers += 1
                move.inventories += result[0]
                move.allocations += result[1]
                move.present += result[2]
        if progress is not None:
            progress(move)


def migrate_to_cells(context, progress=None, batch=BATCH):
    """Move every cell's providers from the API database into the cell's.

    ``progress(move)``, if given, is called with the cell's CellMove after
    each batch and once more when the cell is done (``move.done``).
    Returns a Summary. An API database that fails raises (nothing can be
    moved without it); a cell database that fails is reported in its
    CellMove, and the other cells are still moved.
    """
    moves = []
    for cell in cell_mapping_obj.CellMapping.get_all(context):
        if cell.is_cell0:
            continue
        move = CellMove(cell, pending(context, cell.id))
        moves.append(move)
        if move.total:
            with cb_context.target_cell(context, cell) as cctxt:
                _move_cell(context, cctxt, move, batch, progress)
        move.done = True
        if progress is not None:
            progress(move)
    return Summary(moves, _unplaced(context), pending(context))
