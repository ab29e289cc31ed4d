"""A build its cell cannot place, handed back to move to another cell.

When a cell's reschedule flow has no alternate left, the cell conductor
does not end the build in ERROR if ``[conductor] cross_cell_reschedule``
allows a move and the build has tried fewer than ``[conductor]
max_cells`` cells: it marks the instance handed back, in its own cell
database (``hand_back``: task_state ``handed-back`` and an action event
naming the last failure, one transaction), and casts
``hand_back_instance`` to the super conductors on its own cell's bus.
It holds no API-level credentials and gives nothing back: the super
conductors' cross-cell flow releases the claims and moves the build
(``cellboot.workflows.cross_cell``); their sweep of handed-back builds
starts that flow when the cast was lost.

Which cells a build tried is the API level's record, never the cell's:
the super conductors keep it in the request spec of the API database
(``spec['cross_cell']``: ``{'cells': [{'uuid', 'name'}...],
'last_failure'}``), and send the spec along with the build, which is
how a cell conductor knows whether it may hand back again
(``may_hand_back``). A cell that lies about it gains nothing: the super
conductors check the count again against their own record.
"""

from oslo_log import log as logging

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.builds import fates
from cellboot.db import batches
from cellboot.db.cell import connection as cell_connection
from cellboot import exception
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_mapping as mapping_obj
from cellboot.objects import request_spec as request_spec_obj

LOG = logging.getLogger(__name__)

# The action event of a hand-back, in the cell that hands back.
HANDBACK_EVENT = 'conductor_hand_back'

# The key of the request spec that records the cells a build tried.
SPEC_KEY = 'cross_cell'

# Longest last failure kept (characters): it comes from a cell.
FAILURE_WIDTH = 1000


def cells_tried(request_spec):
    """``[{'uuid', 'name'}]``: the cells the build left, in order."""
    record = (request_spec or {}).get(SPEC_KEY)
    if not isinstance(record, dict):
        return []
    return [cell for cell in record.get('cells') or ()
            if isinstance(cell, dict) and isinstance(cell.get('uuid'), str)]


def left_cells(context, cells):
    """Of ``{instance uuid: cell uuid}`` that a boot placed, the
    instances that have left that cell since (a cross-cell move).

    A boot flow replayed late (its conductor killed after its cast, its
    last steps' states not yet written, and taken over after the build
    failed there and moved on) would otherwise create the instance in
    the cell it left, map it back there and build it again: one server
    in two cells. Left: its mapping points at another cell, or at none
    while its request spec (API database) names that cell among those
    it left. Read only when a flow resumes.
    """
    mappings = mapping_obj.InstanceMapping.get_by_instance_uuids(
        context, list(cells))
    left = set()
    for uuid, cell_uuid in cells.items():
        mapping = mappings.get(uuid)
        if mapping is None:
            continue  # deleted by its owner: the next steps see to it
        if mapping.cell_mapping is not None:
            if mapping.cell_mapping.uuid != cell_uuid:
                left.add(uuid)
            continue
        try:
            spec = request_spec_obj.RequestSpec.get_by_instance_uuid(
                context, uuid).spec
        except exception.RequestSpecNotFound:
            continue
        if any(cell['uuid'] == cell_uuid for cell in cells_tried(spec)):
            left.add(uuid)
    return left


def last_failure(request_spec):
    record = (request_spec or {}).get(SPEC_KEY)
    if not isinstance(record, dict):
        return None
    return record.get('last_failure')


def with_cell_left(request_spec, cell_uuid, cell_name, failure):
    """The spec, recording that the build left ``cell_uuid`` after
    ``failure`` (once: a replay adds nothing)."""
    spec = dict(request_spec)
    tried = cells_tried(spec)
    if all(cell['uuid'] != cell_uuid for cell in tried):
        tried.append({'uuid': cell_uuid, 'name': cell_name})
    spec[SPEC_KEY] = {'cells': tried,
                      'last_failure': str(failure or 'unknown')[
                          :FAILURE_WIDTH]}
    return spec


def may_hand_back(request_spec, cells_so_far=1):
    """Whether a build that tried ``cells_so_far`` more cells than its
    spec records may move on to another cell."""
    if not CONF.conductor.cross_cell_reschedule:
        return False
    return len(cells_tried(request_spec)) + cells_so_far < \
        CONF.conductor.max_cells


def exhausted(cell_names, failure):
    """The error of a build that no cell it tried could build.

    Its message starts ``Exceeded maximum number of retries`` (the
    owner's fault says so) and names every cell tried and the last
    failure (the operator's details).
    """
    return exception.MaxRetriesExceeded(
        reason=f'Tried cell(s) {", ".join(cell_names)}; last failure: '
               f'{failure or "unknown"}')


def give_up(cell_names, failure):
    """The error of a build that may not move on after ``cell_names``:
    with one cell, today's words (its alternates exhausted), with
    several, every cell (``exhausted``)."""
    if len(cell_names) <= 1:
        return exception.MaxRetriesExceeded(
            reason=f'Exhausted the alternate hosts of its cell; last '
                   f'failure: {failure or "unknown"}')
    return exhausted(cell_names, failure)


def cells_left(context, tried_uuids):
    """The enabled cells, cell0 aside, not in ``tried_uuids``."""
    return [cell for cell in cell_mapping_obj.CellMapping.get_enabled(
        context) if cell.uuid != cell_mapping_obj.CELL0_UUID and
        cell.uuid not in tried_uuids]


def may_move(context, request_spec):
    """Whether the API level lets a build whose spec records the cells
    it left (``with_cell_left``) move on: the option on, fewer than
    ``max_cells`` tried, and a cell left."""
    tried = {cell['uuid'] for cell in cells_tried(request_spec)}
    return (CONF.conductor.cross_cell_reschedule and
            len(tried) < CONF.conductor.max_cells and
            bool(cells_left(context, tried)))


def with_cells_tried(error, request_spec):
    """``error``, naming the cells the build tried before, if any."""
    tried = [cell.get('name') or cell['uuid']
             for cell in cells_tried(request_spec)]
    if not tried:
        return error
    return exhausted(tried, f'{last_failure(request_spec)}; then in the '
                            f'other cells: {error}')


def hand_back(context, instance_uuid, cell_mapping, error, rpcapi):
    """Mark the build handed back in its cell, then cast to the super
    conductors (``rpcapi.hand_back_instance``); True if marked.

    An instance deleted, made ACTIVE or taken by a host meanwhile is
    left alone (False). A cast that cannot be sent is logged: the super
    conductors' sweep of handed-back builds finds it.
    """
    with cb_context.target_cell(context, cell_mapping) as cctxt, \
            batches.transaction(
                cctxt, cell_connection.pick_context_manager(cctxt)):
        try:
            instance_obj.Instance(uuid=instance_uuid).hand_back(cctxt)
        except (exception.InstanceNotFound,
                exception.UnexpectedVMState) as exc:
            LOG.info('Not handing back instance %s: %s', instance_uuid, exc)
            return False
        fates.record_event(cctxt, instance_uuid, HANDBACK_EVENT,
                           details=str(error)[:FAILURE_WIDTH])
    LOG.warning('Instance %s: cell %s has no host left for it (%s); '
                'handed back to the super conductors', instance_uuid,
                cell_mapping.name, error)
    try:
        rpcapi.hand_back_instance(context, instance_uuid)
    except Exception as exc:
        LOG.warning('Could not cast the hand-back of instance %s (%s); the '
                    'super conductors\' sweep will find it', instance_uuid,
                    exc)
    return True


def failure_of(history):
    """The last failure a cell gave with its hand-back (its event)."""
    for entry in reversed((history or {}).get('events') or ()):
        if entry.get('event') == HANDBACK_EVENT:
            return entry.get('details')
    return None
