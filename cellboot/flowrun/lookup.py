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
     'conductor', 'owner', 'since', 'resumptions', 'retries',
     'abandoned', 'request_id', 'started_at', 'duration', 'created_at',
     'updated_at', 'location', 'meta'}
    + 'atoms': [{'name', 'type', 'state', 'intention', 'duration',
                 'result': None | str,
                 'failure': None | {'type', 'message'}}]   (details only)

``owner`` is the conductor that runs (or last ran) the flow and
``since`` (an aware UTC datetime) when it took the flow over: a flow
that no second conductor ever took over has neither in its meta, and is
owned by the ``conductor`` that started it, since ``started_at`` (see
``summaries.ownership``). ``resumptions`` lists every take-over of a
started flow, oldest first: ``{'by', 'at', 'from_state'}``, as written;
``retries`` the operators' retries of it, the same way. ``abandoned`` is
None, or the note of the operator who abandoned the flow
(``abandons.read``: ``{'by', 'at', 'reason', 'from_state',
'settled_at'}``).

An atom's ``result`` is a one-line summary of what it returned (see
``summaries.summarize_result``), never the whole value: a multi-create's atoms
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

from oslo_log import log as logging
from taskflow import exceptions as tf_exc
from taskflow import storage as tf_storage

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.flowrun import backend as flow_db
from cellboot.db import pages
from cellboot import exception
from cellboot.flowrun import kinds
from cellboot.flowrun import summaries
from cellboot.flowrun import tables
from cellboot.objects import cell_mapping as cell_mapping_obj

LOG = logging.getLogger(__name__)

FLOW_DATABASE = 'flow database'

# Seconds to wait for each database when searching them all, by default
# (the API passes its [api] cell_timeout).
CELL_TIMEOUT = 30


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
    query = tables.summary_query(instance_uuid, state)
    engine = flow_db.get_backend(connection).engine
    found = []
    with engine.connect() as conn:
        while True:
            # The text match on meta may find a flow that only mentions
            # the instance: such rows are read past, page after page.
            rows = conn.execute(pages.page(query, tables.ORDER, after,
                                           limit)).all()
            found += [flow for flow in (summaries.summary(row, location, level)
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

    The flow is the one ``kinds`` has for the flow's kind; a corrupt flow
    has no order.
    """
    if summary['corrupt']:
        return []
    flow = kinds.flow(summary['kind'])
    names = [flow.retry.name] if getattr(flow, 'retry', None) else []
    return names + [atom.name for atom in flow]


def _atoms(backend, flow_uuid, order):
    """The flow's atoms described, in ``order``; ``(atoms, None)``, or
    ``([], why they cannot be read)``.

    Whatever TaskFlow cannot decode (values of the wrong type or shape,
    text that is not JSON) makes the flow corrupt, not the request fail.
    """
    try:
        flow_detail = backend.get_connection().get_flow_details(flow_uuid)
        atoms = [ad for ad in flow_detail
                 if ad.name != tf_storage.Storage.injector_name]
        atoms.sort(key=lambda ad: (order.index(ad.name) if ad.name in order
                                   else len(order), str(ad.name)))
        return [summaries.describe_atom(ad) for ad in atoms], None
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
    row = tables.summary_row(backend.engine, flow_uuid)
    if row is None:
        raise exception.FlowNotFound(flow=flow_uuid)
    details = summaries.summary(row, location, level)
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
# ``cell_name``: the cell whose database it is (None: the flow database).
_Place = collections.namedtuple(
    '_Place', 'uuid name database_connection level cell_name')


def _databases(context):
    """The flow database and every cell database, as ``_Place``s."""
    found = [_Place(FLOW_DATABASE, FLOW_DATABASE,
                    CONF.flow_persistence.connection, kinds.SUPER, None)]
    for cell in cell_mapping_obj.CellMapping.get_all(context):
        if not cell.is_cell0:
            location = f'cell {cell.name}'
            found.append(_Place(location, location,
                                cell.database_connection, kinds.CELL,
                                cell.name))
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
    return tables.position(flow_db.get_backend(url).engine, flow_uuid)


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
    return locate_flow(context, flow_uuid, timeout)[1]


def locate_flow(context, flow_uuid, timeout=CELL_TIMEOUT):
    """``(place, flow)``: ``get_flow_everywhere``'s flow and where it is.

    ``place`` has the ``database_connection`` holding the flow, the
    ``level`` of its flows and its ``cell_name`` (None: the flow
    database), for a caller that acts on the flow there.
    """
    places = {place.uuid: place for place in _databases(context)}

    def lookup(place):
        try:
            return get_flow(place.database_connection, flow_uuid,
                            location=place.uuid, level=place.level)
        except exception.FlowNotFound:
            return _MISSING

    results = _everywhere(context, places.values(), timeout, lookup)
    for location, flow in results.items():
        if flow is not None and flow is not _MISSING:
            warn_if_corrupt(flow)
            return places[location], flow
    silent = sorted(location for location, flow in results.items()
                    if flow is None)
    if silent:
        raise exception.FlowLookupIncomplete(flow=flow_uuid,
                                             locations=', '.join(silent))
    raise exception.FlowNotFound(flow=flow_uuid)


# What a database that answered without the flow yields.
_MISSING = object()
