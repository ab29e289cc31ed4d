"""Every SQL statement cellboot runs on TaskFlow's tables, in one place.

TaskFlow keeps flows in three tables (``logbooks``, ``flowdetails``,
``atomdetails``) and reads and writes them through its persistence
backend. cellboot goes around that backend where it costs too much or
cannot say what is needed, always here:

* creating a flow (``insert_book``): one transaction for the logbook,
  the flow detail, its atoms and its fence (``cellboot.flowrun.fencing``),
  failing on an existing logbook where TaskFlow's ``save_logbook`` would
  merge into it (the insert is the "does this request's flow exist?"
  check);
* the engine's deferred writes (``cellboot.flowrun.storage``): plain
  UPDATEs and INSERTs where TaskFlow's backend reads every row back,
  merges and rewrites all the atoms of the flow;
* the operator's retry of a flow (``change_flow_state``, ``update_atoms``);
* the owner's take-over of a flow (``merge_flow_meta``) and the flow
  meta a run adds, merged into the stored meta so that two writers'
  keys both survive;
* reading flows for operators and sweepers (``summary_query``,
  ``position``, ``flow_states``) with SQLAlchemy Core: one query per
  database whatever the number of flows, the meta read as text so that
  one row that is not JSON hides no other flow;
* purging ended flows (``ended_flows``, ``count_flows``,
  ``delete_flows``), their fences with them.

The table definitions are TaskFlow's own (``tables.fetch``), fetched
once; the contract test (``tests/unit/flowrun/test_taskflow_contract``)
checks that the columns used here are still there.
"""

import sqlalchemy as sa
from taskflow.persistence.backends.sqlalchemy import tables as tf_tables
from taskflow.persistence import models
from taskflow import states

from cellboot.flowrun import fencing
from cellboot.flowrun import flow_states

_TABLES = tf_tables.fetch(sa.MetaData())
LOGBOOKS = _TABLES.logbooks
FLOWS = _TABLES.flowdetails
ATOMS = _TABLES.atomdetails

# Flows in these states are done for good: nothing resumes them.
ENDED_FLOW_STATES = (states.SUCCESS, states.REVERTED)

# The order of every flow listing: oldest first, the uuid for a tie.
ORDER = (FLOWS.c.created_at, FLOWS.c.uuid)


# -- creating a flow ----------------------------------------------------------

def insert_book(engine, book):
    """Insert a new logbook, its flow details, atoms and fences at once.

    One transaction. Unlike TaskFlow's ``save_logbook`` (which merges
    into a logbook of the same uuid), an existing logbook makes it fail:
    IntegrityError.
    """
    with engine.begin() as conn:
        conn.execute(sa.insert(LOGBOOKS).values(**book.to_dict()))
        for flow_detail in book:
            conn.execute(sa.insert(FLOWS).values(
                parent_uuid=book.uuid, **flow_detail.to_dict()))
            insert_atoms(conn, flow_detail.uuid, list(flow_detail))
            fencing.insert_first(conn, flow_detail.uuid)


# -- the engine's writes ------------------------------------------------------

# What an atom's run changes; prepared once, run as executemany.
OUTCOME_FIELDS = ('state', 'intention', 'results', 'failure',
                  'revert_results', 'revert_failure', 'version')
_UPDATE_ATOM = sa.update(ATOMS).where(
    ATOMS.c.uuid == sa.bindparam('b_uuid')).values(
    {field: sa.bindparam(f'v_{field}')
     for field in OUTCOME_FIELDS + ('meta',)})
_UPDATE_ATOM_META = sa.update(ATOMS).where(
    ATOMS.c.uuid == sa.bindparam('b_uuid')).values(
    meta=sa.bindparam('v_meta'))
# A flow that has ended stays ended: an engine that lost its claim to
# another conductor (which finished the flow) must not write its own
# SUSPENDED over the winner's SUCCESS.
_UPDATE_FLOW_STATE = sa.update(FLOWS).where(
    FLOWS.c.uuid == sa.bindparam('b_uuid'),
    sa.or_(FLOWS.c.state.is_(None),
           FLOWS.c.state.notin_(flow_states.FINISHED_STATES))).values(
    state=sa.bindparam('v_state'))


def insert_atoms(conn, flow_uuid, atom_details):
    """Insert new atom details of flow ``flow_uuid`` (one executemany)."""
    if atom_details:
        conn.execute(sa.insert(ATOMS), [
            dict(detail.to_dict(), parent_uuid=flow_uuid,
                 atom_type=models.atom_detail_type(detail))
            for detail in atom_details])


def missing_atoms(conn, atom_details):
    """Those of ``atom_details`` that have no row yet."""
    if not atom_details:
        return []
    found = set(conn.execute(sa.select(ATOMS.c.uuid).where(
        ATOMS.c.uuid.in_([detail.uuid for detail in atom_details])))
        .scalars())
    return [detail for detail in atom_details if detail.uuid not in found]


def update_atoms(conn, changed):
    """Write the outcome and meta of ``{uuid: atom detail}``."""
    if changed:
        conn.execute(_UPDATE_ATOM, [_update_params(uuid, detail)
                                    for uuid, detail in changed.items()])


def update_atom_meta(conn, changed):
    """Write only the meta of ``{uuid: atom detail}``."""
    if changed:
        conn.execute(_UPDATE_ATOM_META, [
            {'b_uuid': uuid, 'v_meta': detail.meta}
            for uuid, detail in changed.items()])


def set_flow_state(conn, flow_uuid, state):
    """A flow's new state, unless it has ended (see above)."""
    conn.execute(_UPDATE_FLOW_STATE, {'b_uuid': flow_uuid, 'v_state': state})


def change_flow_state(conn, flow_uuid, expected, state):
    """Move a flow from state ``expected`` to ``state``, ended or not.

    The operator's retry reopens a FAILURE flow, which ``set_flow_state``
    never does. Whether the flow was still in ``expected`` (a flow whose
    state changed meanwhile is left alone).
    """
    expected_is = (FLOWS.c.state.is_(None) if expected is None
                   else FLOWS.c.state == expected)
    return bool(conn.execute(sa.update(FLOWS).where(
        FLOWS.c.uuid == flow_uuid, expected_is).values(
        state=state)).rowcount)


def merge_flow_meta(conn, flow_uuid, merge, fallback=None):
    """Rewrite a flow's meta as ``merge(stored meta)``; return it.

    Read and written in the caller's transaction, so that keys another
    writer stored meanwhile (a conductor taking the flow over writes
    ``owner`` and ``resumptions``) are merged, not lost. ``fallback``
    stands for a stored meta that is empty.
    """
    stored = conn.execute(sa.select(FLOWS.c.meta).where(
        FLOWS.c.uuid == flow_uuid)).scalar()
    meta = merge(dict(stored or fallback or {}))
    conn.execute(sa.update(FLOWS).where(
        FLOWS.c.uuid == flow_uuid).values(meta=meta))
    return meta


def _update_params(uuid, atom_detail):
    values = atom_detail.to_dict()
    params = {f'v_{field}': values[field] for field in OUTCOME_FIELDS}
    params.update(b_uuid=uuid, v_meta=values['meta'])
    return params


# -- reading flows ------------------------------------------------------------

def summary_query(instance_uuid=None, state=None):
    """The flow detail columns a summary needs, the meta as text.

    ``instance_uuid`` keeps the flows whose meta mentions it (a text
    match the caller refines), ``state`` those in that state.
    """
    query = sa.select(FLOWS.c.uuid, FLOWS.c.name, FLOWS.c.state,
                      FLOWS.c.created_at, FLOWS.c.updated_at,
                      sa.cast(FLOWS.c.meta, sa.UnicodeText).label('meta'))
    if instance_uuid:
        query = query.where(
            sa.cast(FLOWS.c.meta, sa.Text).like(f'%{instance_uuid}%'))
    if state:
        query = query.where(FLOWS.c.state == state)
    return query


def summary_row(engine, flow_uuid):
    """The summary columns of flow ``flow_uuid``; None if it is not there."""
    with engine.connect() as conn:
        return conn.execute(summary_query().where(
            FLOWS.c.uuid == flow_uuid)).first()


def position(engine, flow_uuid):
    """``(created_at, uuid)`` of a flow, its place in ``ORDER``; or None."""
    with engine.connect() as conn:
        row = conn.execute(sa.select(*ORDER).where(
            FLOWS.c.uuid == flow_uuid)).first()
    if row is not None and row.created_at is not None:
        return tuple(row)
    return None


def flow_states(engine, flow_uuids):
    """``{flow uuid: state}`` of those of ``flow_uuids`` that exist."""
    query = sa.select(FLOWS.c.uuid, FLOWS.c.state).where(
        FLOWS.c.uuid.in_(list(flow_uuids)))
    with engine.connect() as conn:
        return {row.uuid: row.state for row in conn.execute(query)}


# -- purging ended flows ------------------------------------------------------

def has_flow_tables(engine):
    """Whether TaskFlow's tables exist in the database of ``engine``."""
    return sa.inspect(engine).has_table(FLOWS.name)


def _ended_before(before):
    flows = FLOWS.c
    return sa.and_(flows.state.in_(ENDED_FLOW_STATES),
                   sa.func.coalesce(flows.updated_at, flows.created_at)
                   < before)


def ended_flows(engine, before, after_uuid, limit):
    """``[uuid]``: up to ``limit`` flows that ended before ``before``.

    In uuid order, after ``after_uuid`` ('' for the first).
    """
    flows = FLOWS.c
    with engine.connect() as conn:
        return list(conn.execute(sa.select(flows.uuid).where(
            _ended_before(before), flows.uuid > after_uuid).order_by(
            flows.uuid).limit(limit)).scalars())


def _flow_rows(flow_uuids):
    """``(table, where)`` of flows' rows: atoms, fences, then the flows."""
    return ((ATOMS, ATOMS.c.parent_uuid.in_(flow_uuids)),
            (fencing.FENCES, fencing.FENCES.c.flow_uuid.in_(flow_uuids)),
            (FLOWS, FLOWS.c.uuid.in_(flow_uuids)))


def _count(conn, table, where):
    return conn.execute(
        sa.select(sa.func.count()).select_from(table).where(where)).scalar()


def _delete(conn, table, where):
    return conn.execute(sa.delete(table).where(where)).rowcount


def count_flows(engine, flow_uuids):
    """What ``delete_flows`` would delete: ``{table: rows}``."""
    flow_uuids = list(flow_uuids)
    with engine.connect() as conn:
        counts = {table.name: _count(conn, table, where)
                  for table, where in _flow_rows(flow_uuids)}
        parents = sa.select(FLOWS.c.parent_uuid).where(
            FLOWS.c.uuid.in_(flow_uuids))
        counts[LOGBOOKS.name] = _count(conn, LOGBOOKS,
                                       LOGBOOKS.c.uuid.in_(parents))
    return counts


def delete_flows(engine, flow_uuids, before):
    """Delete ended flows, their atoms and emptied logbooks, in one go.

    Only the flows of ``flow_uuids`` still ended before ``before`` go;
    a logbook goes when the last of its flows did. ``{table: rows}``.
    """
    with engine.begin() as conn:
        rows = conn.execute(sa.select(FLOWS.c.uuid, FLOWS.c.parent_uuid)
                            .where(FLOWS.c.uuid.in_(list(flow_uuids)),
                                   _ended_before(before))).all()
        flow_uuids = [row.uuid for row in rows]
        parents = sorted({row.parent_uuid for row in rows} - {None})
        counts = {}
        for table, where in _flow_rows(flow_uuids):
            counts[table.name] = (_delete(conn, table, where) if flow_uuids
                                  else 0)
        left = sa.select(FLOWS.c.uuid).where(
            FLOWS.c.parent_uuid == LOGBOOKS.c.uuid).exists()
        counts[LOGBOOKS.name] = (_delete(conn, LOGBOOKS, sa.and_(
            LOGBOOKS.c.uuid.in_(parents), ~left)) if parents else 0)
    return counts
