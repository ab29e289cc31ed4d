"""Finding persisted flows: by instance, by state, by id, anywhere.

Boot flows are in the flow database, reschedule flows in their cell's
database; both keep the instance uuids they work on in their flow
detail's meta (see ``engine``). Searches read TaskFlow's tables with
SQLAlchemy Core (one query per database, whatever the number of flows;
with a limit, one page of each, after a marker) and load a flow's atoms
only when one flow is asked for.

Summaries and details are plain dicts, ready for a command or a REST
answer::

    {'uuid', 'name', 'state', 'kind', 'corrupt', 'instance_uuids',
     'conductor', 'owner', 'since', 'resumptions', 'request_id',
     'started_at', 'duration', 'created_at', 'updated_at', 'location',
     'meta'}
    + 'atoms': [{'name', 'type', 'state', 'intention', 'duration',
                 'result': None | str,
                 'failure': None | {'type', 'message'}}]   (details only)

``owner`` is the conductor that runs (or last ran) the flow and
``since`` (an aware UTC datetime) when it took the flow over: a flow
that no second conductor ever took over has neither in its meta, and is
owned by the ``conductor`` that started it, since ``started_at`` (see
``ownership``). ``resumptions`` lists every take-over of a started
flow, oldest first: ``{'by', 'at', 'from_state'}``, as written.

An atom's ``result`` is a one-line summary of what it returned (see
``summarize_result``), never the whole value: a multi-create's atoms
return one entry per instance.

Rows are read as data written by someone the reader must not trust (a
cell writes its own database): nothing they name is imported or called
(atoms are put in order by the factory ``kinds`` registers for the
flow's kind), and values of the wrong type read as absent. ``corrupt``
is None, or why the flow is never run (``kinds.corruption``, or atoms
that cannot be read); a corrupt flow is still listed and shown, for the
operator to see what it holds.
"""

import collections
import datetime

from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import uuidutils

import sqlalchemy as sa
from taskflow import exceptions as tf_exc
from taskflow.persistence.backends.sqlalchemy import tables as tf_tables
from taskflow.persistence import models as tf_models
from taskflow.types import failure as tf_failure

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db import flow_db
from cellboot.db import pages
from cellboot import exception
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.workflows import kinds

LOG = logging.getLogger(__name__)

_TABLES = tf_tables.fetch(sa.MetaData())
_FLOWS = _TABLES.flowdetails

# The order of every flow listing: oldest first, the uuid for a tie.
_ORDER = (_FLOWS.c.created_at, _FLOWS.c.uuid)

# The atom TaskFlow adds to hold a flow's injected store.
_INJECTOR = '_TaskFlow_INJECTOR'

FLOW_DATABASE = 'flow database'

# Seconds to wait for each database when searching them all, by default
# (the API passes its [api] cell_timeout).
CELL_TIMEOUT = 30

# Longest result summary kept per atom (characters).
RESULT_SUMMARY_WIDTH = 80


def parse_time(value):
    """A timestamp as an aware UTC datetime; None if absent or unreadable.

    Flow meta keeps ISO 8601 text, written naive (``utcnow().isoformat()``)
    or with its zone (``Z``, ``+00:00``); TaskFlow's rows keep naive
    datetimes. Naive values are UTC, as everything cellboot writes.
    """
    if isinstance(value, str):
        try:
            value = datetime.datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if not isinstance(value, datetime.datetime):
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=datetime.timezone.utc)
    return value.astimezone(datetime.timezone.utc)


def _text(value):
    """A stored value that must be text; None when it is anything else."""
    return value if isinstance(value, str) else None


def _seconds(value):
    """A stored duration; None unless it is a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _resumptions(value):
    """The meta's ``resumptions``, as a list of three-key dicts.

    Tolerates what a foreign or older writer may have left: no list, or
    entries missing a key.
    """
    if not isinstance(value, (list, tuple)):
        return []
    return [{'by': entry.get('by'), 'at': entry.get('at'),
             'from_state': entry.get('from_state')}
            for entry in value if isinstance(entry, dict)]


def ownership(meta, created_at=None):
    """``(owner, since, resumptions)`` of a flow, from its meta.

    The owner is ``owner``, else ``conductor`` (the one that created the
    flow and never gave it up). ``since`` is the first readable of
    ``owned_since``, ``started_at`` and the row's ``created_at``.
    """
    meta = meta if isinstance(meta, dict) else {}
    owner = _text(meta.get('owner')) or _text(meta.get('conductor'))
    since = None
    for value in (meta.get('owned_since'), meta.get('started_at'),
                  created_at):
        since = parse_time(value)
        if since is not None:
            break
    return owner, since, _resumptions(meta.get('resumptions'))


def _instance_uuids(value):
    if not isinstance(value, (list, tuple)):
        return []
    return [uuid for uuid in value if isinstance(uuid, str)]


def _read_meta(text):
    """A row's meta, from its text; ``(meta, None)`` or ``({}, reason)``.

    Read as text and parsed here: TaskFlow's column type would raise on
    a value that is not JSON, and one such row would hide every flow.
    """
    if text is None:
        return {}, None
    try:
        meta = jsonutils.loads(text)
    except (ValueError, TypeError, RecursionError):
        return {}, 'its meta is not JSON'
    return meta, None


def _summary(row, location, level=None):
    meta, unreadable = _read_meta(row.meta)
    corrupt = unreadable or kinds.corruption(meta, level)
    meta = meta if isinstance(meta, dict) else {}
    owner, since, resumptions = ownership(meta, row.created_at)
    return {
        'uuid': row.uuid,
        'name': row.name,
        'state': row.state,
        'kind': _text(meta.get('kind')),
        'corrupt': corrupt,
        'instance_uuids': _instance_uuids(meta.get('instance_uuids')),
        'conductor': _text(meta.get('conductor')),
        'owner': owner,
        'since': since,
        'resumptions': resumptions,
        'request_id': _text(meta.get('request_id')),
        'started_at': _text(meta.get('started_at')),
        'duration': _seconds(meta.get('duration')),
        'created_at': row.created_at,
        'updated_at': row.updated_at,
        'location': location,
        'meta': meta,
    }


def _select_flows():
    """The flow detail columns a summary needs, the meta as text."""
    return sa.select(_FLOWS.c.uuid, _FLOWS.c.name, _FLOWS.c.state,
                     _FLOWS.c.created_at, _FLOWS.c.updated_at,
                     sa.cast(_FLOWS.c.meta, sa.UnicodeText).label('meta'))


def find_flows(connection, instance_uuid=None, kind=None, state=None,
               location=FLOW_DATABASE, level=None, limit=None,
               after=None):
    """Summaries of the flows persisted at ``connection``, oldest first.

    Filters: an instance the flow works on, its kind ('boot',
    'reschedule'), its state (e.g. 'RUNNING'). ``level``
    (``kinds.SUPER``, ``kinds.CELL``): the level whose flows
    ``connection`` holds; a flow of another level's kind is corrupt
    there. ``limit`` and ``after`` (the ``(created_at, uuid)`` of a
    flow) make it one page of the list: at most ``limit`` flows that
    sort after ``after``.
    """
    query = _select_flows()
    if instance_uuid:
        query = query.where(
            sa.cast(_FLOWS.c.meta, sa.Text).like(f'%{instance_uuid}%'))
    if state:
        query = query.where(_FLOWS.c.state == state)
    engine = flow_db.get_backend(connection).engine
    found = []
    with engine.connect() as conn:
        while True:
            # The text match on meta may find a flow that only mentions
            # the instance: such rows are read past, page after page.
            rows = conn.execute(pages.page(query, _ORDER, after,
                                           limit)).all()
            found += [flow for flow in (_summary(row, location, level)
                                        for row in rows)
                      if _matches(flow, instance_uuid, kind)]
            if limit is None or len(rows) < limit or len(found) >= limit:
                return found[:limit]
            after = (rows[-1].created_at, rows[-1].uuid)


def _matches(flow, instance_uuid, kind):
    return ((not instance_uuid or instance_uuid in flow['instance_uuids'])
            and (not kind or flow['kind'] == kind))


def _sort_key(flow):
    return (flow['created_at'] is None, flow['created_at'], flow['uuid'])


def _atom_order(summary):
    """Atom names in flow order: those of the kind's flow, if it has one.

    The flow is built by the factory that ``kinds`` registers for the
    flow's kind; a corrupt flow has no order.
    """
    if summary['corrupt']:
        return []
    flow = kinds.factory(summary['kind'])()
    names = [flow.retry.name] if getattr(flow, 'retry', None) else []
    return names + [atom.name for atom in flow]


def failure_type(failure):
    """The class name of the exception behind a TaskFlow Failure.

    A Failure iterates over its exception's class names, most derived
    first (it keeps the names, not the class, once persisted).
    """
    names = list(failure)
    return names[0].rsplit('.', 1)[-1] if names else 'Error'


def _short(value):
    """One word for one value of a result: an outcome, a host, a count."""
    if value is None:
        return 'none'
    if isinstance(value, dict):
        if 'service_host' in value:      # a Selection: where it goes
            return str(value['service_host'])
        return f'{len(value)} item(s)'
    if isinstance(value, (list, tuple)):
        return _short(value[0]) if value else 'none'
    return str(value)


def _per_instance(result):
    """``{instance_uuid: value}`` read as counts: 'ok (2), error (1)'."""
    counts = {}
    for value in result.values():
        word = _short(value)
        counts[word] = counts.get(word, 0) + 1
    words = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if len(result) == 1:
        return words[0][0]
    return (f'{len(result)} instances: ' +
            ', '.join(f'{word} ({count})' for word, count in words))


def _tries(history):
    """A retry controller's history: what each try got and what failed."""
    tries = []
    for provided, failures in history:
        text = _short(provided)
        if failures:
            kinds = sorted({failure_type(failure)
                            for failure in failures.values()})
            text += f' failed ({", ".join(kinds)})'
        tries.append(text)
    count = 'one try' if len(tries) == 1 else f'{len(tries)} tries'
    return f'{count}: ' + '; '.join(tries)


def summarize_result(atom_detail):
    """A one-line summary of what an atom returned; None if nothing.

    Per-instance results (``{instance_uuid: outcome}``, how the boot
    flow's atoms work on a batch) become counts of each outcome; a
    selection becomes its host; a retry controller's history lists each
    try. A failed atom has no result: its failure says what happened.
    """
    results = atom_detail.results
    if isinstance(atom_detail, tf_models.RetryDetail):
        text = _tries(results) if results else None
    elif results is None or isinstance(results, tf_failure.Failure):
        text = None
    elif isinstance(results, dict) and results and all(
            uuidutils.is_uuid_like(key) for key in results):
        text = _per_instance(results)
    else:
        text = _short(results)
    if text is not None and len(text) > RESULT_SUMMARY_WIDTH:
        text = text[:RESULT_SUMMARY_WIDTH - 3] + '...'
    return text


def describe_atom(atom_detail):
    """One atom's state, duration and failure, as plain values."""
    failure = atom_detail.failure or atom_detail.revert_failure
    described = None
    if failure is not None:
        described = {
            'type': failure_type(failure),
            'message': _text(failure.exception_str),
        }
    return {
        'name': atom_detail.name,
        'type': type(atom_detail).__name__.replace('Detail', '').lower(),
        'state': atom_detail.state,
        'intention': atom_detail.intention,
        'duration': _seconds((atom_detail.meta or {}).get('duration')),
        'result': summarize_result(atom_detail),
        'failure': described,
    }


def _atoms(backend, flow_uuid, order):
    """The flow's atoms described, in ``order``; ``(atoms, None)``, or
    ``([], why they cannot be read)``.

    Whatever TaskFlow cannot decode (values of the wrong type or shape,
    text that is not JSON) makes the flow corrupt, not the request fail.
    """
    try:
        flow_detail = backend.get_connection().get_flow_details(flow_uuid)
        atoms = [ad for ad in flow_detail if ad.name != _INJECTOR]
        atoms.sort(key=lambda ad: (order.index(ad.name) if ad.name in order
                                   else len(order), str(ad.name)))
        return [describe_atom(ad) for ad in atoms], None
    except (tf_exc.NotFound, tf_exc.StorageFailure):
        raise
    except Exception as exc:
        LOG.warning('The atoms of flow %s cannot be read: %s: %s',
                    flow_uuid, type(exc).__name__, exc)
        return [], f'its atoms cannot be read ({type(exc).__name__})'


def get_flow(connection, flow_uuid, location=FLOW_DATABASE, level=None):
    """A flow's summary and its atoms; FlowNotFound if it is not there.

    ``level``: see ``find_flows``.
    """
    backend = flow_db.get_backend(connection)
    with backend.engine.connect() as conn:
        row = conn.execute(_select_flows().where(
            _FLOWS.c.uuid == flow_uuid)).first()
    if row is None:
        raise exception.FlowNotFound(flow=flow_uuid)
    details = _summary(row, location, level)
    try:
        atoms, unreadable = _atoms(backend, flow_uuid, _atom_order(details))
    except tf_exc.NotFound:
        raise exception.FlowNotFound(flow=flow_uuid)
    details['atoms'] = atoms
    details['corrupt'] = details['corrupt'] or unreadable
    return details


def warn_if_corrupt(flow):
    """A WARNING naming a corrupt flow (a summary), where it is and why."""
    if flow['corrupt']:
        LOG.warning('Flow %s in the %s is corrupt and is never run: %s',
                    flow['uuid'], flow['location'], flow['corrupt'])


# Where flows are persisted, in the shape scatter_gather_cells reads
# (``uuid`` is the location an operator reads), with the level whose
# flows it holds (``kinds.SUPER``, ``kinds.CELL``).
_Place = collections.namedtuple('_Place',
                                'uuid name database_connection level')


def _databases(context):
    """The flow database and every cell database, as ``_Place``s."""
    found = [_Place(FLOW_DATABASE, FLOW_DATABASE,
                    CONF.flow_persistence.connection, kinds.SUPER)]
    for cell in cell_mapping_obj.CellMapping.get_all(context):
        if not cell.is_cell0:
            location = f'cell {cell.name}'
            found.append(_Place(location, location,
                                cell.database_connection, kinds.CELL))
    return found


def _everywhere(context, places, timeout, fn):
    """``{location: result}`` of ``fn(place)`` for every place.

    Read in parallel, each for ``timeout`` seconds at most; a database
    that fails or does not answer yields ``None`` (with a warning), so
    that one broken or silent cell does not hide the others' flows nor
    hold up the answer.
    """
    places = {place.uuid: place for place in places}
    results = cb_context.scatter_gather_cells(
        context, places.values(), timeout,
        lambda cctxt: fn(places[cctxt.cell_uuid]))
    found = {}
    for location, result in results.items():
        if cb_context.is_cell_failure(result):
            LOG.warning('Cannot read the flows in the %s: %s', location,
                        getattr(result, 'exception', 'it did not answer '
                                f'within {timeout} s'))
            result = None
        found[location] = result
    return found


def find_flows_everywhere(context, instance_uuid=None, state=None,
                          since_before=None, limit=None, marker=None,
                          timeout=CELL_TIMEOUT, unreachable=None):
    """Flow summaries from the flow database and every cell, oldest first.

    ``since_before`` (an aware datetime) keeps the flows owned since
    before it (``since``, see ``ownership``): with a RUNNING state, the
    flows that may be stuck.

    ``limit`` and ``marker`` (a flow uuid; MarkerNotFound if no database
    has it) make it one page: the ``limit`` first flows after the marker,
    each database read for no more than that.

    A database that cannot be read within ``timeout`` seconds (a cell
    down or silent, TaskFlow's tables never synced) is skipped with a
    warning and its location appended to ``unreachable`` (a list, when
    given), so that one broken cell does not hide the others' flows.
    """
    places = _databases(context)
    after = None
    if marker is not None:
        after = _position(context, places, marker, timeout)
    results = _everywhere(context, places, timeout, lambda place: find_flows(
        place.database_connection, instance_uuid=instance_uuid,
        state=state, location=place.uuid, level=place.level, limit=limit,
        after=after))
    found = []
    for location, flows in results.items():
        if flows is None:
            if unreachable is not None:
                unreachable.append(location)
            continue
        found.extend(flows)
    for flow in found:
        warn_if_corrupt(flow)
    if since_before is not None:
        found = [flow for flow in found
                 if flow['since'] is not None
                 and flow['since'] < since_before]
    found.sort(key=_sort_key)
    return found[:limit]


def _position_in(url, flow_uuid):
    with flow_db.get_backend(url).engine.connect() as conn:
        row = conn.execute(sa.select(*_ORDER).where(
            _FLOWS.c.uuid == flow_uuid)).first()
    if row is not None and row.created_at is not None:
        return tuple(row)
    return None


def _position(context, places, flow_uuid, timeout):
    """``(created_at, uuid)`` of a flow in any of ``places``."""
    results = _everywhere(context, places, timeout, lambda place:
                          _position_in(place.database_connection, flow_uuid))
    for position in results.values():
        if position is not None:
            return position
    raise exception.MarkerNotFound(marker=flow_uuid)


def get_flow_everywhere(context, flow_uuid, timeout=CELL_TIMEOUT):
    """A flow by id, from whichever database holds it.

    FlowNotFound when no database has it; FlowLookupIncomplete (503)
    when none of those that answered has it and some did not answer
    within ``timeout`` seconds, since the flow may be there.
    """
    def lookup(place):
        try:
            return get_flow(place.database_connection, flow_uuid,
                            location=place.uuid, level=place.level)
        except exception.FlowNotFound:
            return _MISSING

    results = _everywhere(context, _databases(context), timeout, lookup)
    for flow in results.values():
        if flow is not None and flow is not _MISSING:
            warn_if_corrupt(flow)
            return flow
    silent = sorted(location for location, flow in results.items()
                    if flow is None)
    if silent:
        raise exception.FlowLookupIncomplete(flow=flow_uuid,
                                             locations=', '.join(silent))
    raise exception.FlowNotFound(flow=flow_uuid)


# What a database that answered without the flow yields.
_MISSING = object()
