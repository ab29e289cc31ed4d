"""The super conductors' side of a hand-back: who may ask, and the start.

A cell's conductors hand back a build they cannot place
(``cellboot.builds.handback``) with a cast on their own cell's bus,
topic ``cellboot-super-conductor.<cell>``. Every super conductor
serves that topic on each cell's bus with one ``HandBackEndpoint`` per
cell, bound to that cell's mapping: the rights of a request come from
the bus it arrived on, never from the message (which a compromised
cell may forge). A hand-back arriving on cell X's bus is taken only for
an instance whose mapping points at X and whose row in X carries the
hand-back mark; anything else is refused, logged once (WARNING), and
nothing is changed.

``start_move`` starts the instance's cross-cell flow
(``cellboot.workflows.cross_cell``), under the uuid derived from the
instance and the cell it leaves: two casts, or a cast and the sweep of
handed-back builds (``HandedBack``), start one flow. A build that may
not move on by the API level's own record (``handback.may_move``: the
option off here, ``max_cells`` reached, no other cell) is ended in
ERROR in its cell instead, with no flow, as it would have been without
a hand-back.
"""

import datetime
import types

from oslo_log import log as logging
import oslo_messaging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from cellboot.builds import fates
from cellboot.builds import handback
from cellboot.conductor import sweep_lock
from cellboot.conductor import unowned_flows
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot import exception
from cellboot.flowrun import kinds
from cellboot.flowrun import records
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_history
from cellboot.objects import instance_mapping as mapping_obj
from cellboot.objects import request_spec as request_spec_obj
from cellboot.rpc import client

LOG = logging.getLogger(__name__)


def refusal(context, instance_uuid, cell):
    """Why a hand-back of ``instance_uuid`` from ``cell`` is refused
    (None: it is taken), and the instance row when taken."""
    if not isinstance(instance_uuid, str) or \
            not uuidutils.is_uuid_like(instance_uuid):
        return f'instance_uuid {str(instance_uuid)[:80]!r} is no uuid', None
    try:
        mapping = mapping_obj.InstanceMapping.get_by_instance_uuid(
            context, instance_uuid)
    except exception.InstanceMappingNotFound:
        return f'no instance {instance_uuid} is known', None
    if mapping.cell_mapping is None or \
            mapping.cell_mapping.uuid != cell.uuid or \
            mapping.queued_for_delete:
        return (f'instance {instance_uuid} is not a live instance of cell '
                f'{cell.name}'), None
    with cb_context.target_cell(context, cell) as cctxt:
        try:
            instance = instance_obj.Instance.get_by_uuid(cctxt,
                                                         instance_uuid)
        except exception.InstanceNotFound:
            return f'cell {cell.name} has no instance {instance_uuid}', None
    if not instance.handed_back:
        return (f'instance {instance_uuid} is not marked handed back in '
                f'cell {cell.name}'), None
    return None, instance


def start_move(manager, context, instance_uuid, cell):
    """Start the cross-cell flow of a handed-back build, once.

    The flow runs under the request that created the instance (its
    create action's), so that the new cell's create action is that
    request's too. Returns the refusal (a string), or None.
    """
    reason, instance = refusal(context, instance_uuid, cell)
    if reason is not None:
        return reason
    with cb_context.target_cell(context, cell) as cctxt:
        rctxt = fates.creating_context(cctxt, instance)
        failure = handback.failure_of(
            instance_history.read(cctxt, instance_uuid, cell.name))
    spec = handback.with_cell_left(
        request_spec_obj.RequestSpec.get_by_instance_uuid(
            context, instance_uuid).spec, cell.uuid, cell.name, failure)
    if not handback.may_move(context, spec):
        # Nowhere to go (one cell, max_cells reached, the option off
        # here): it ends where it is, as it would have without a move.
        fates.fail_in_cell(
            rctxt, manager.scheduler, instance_uuid, cell,
            handback.give_up([c['name'] for c in handback.cells_tried(
                spec)], failure), event=fates.RESCHEDULE_EVENT)
        return None
    store = {'instance_uuids': [instance_uuid], 'old_cell': cell.uuid}
    manager.cross_cell_runner.start(
        rctxt, store, [instance_uuid], f'{instance_uuid}:{cell.uuid}',
        f'Move of instance {instance_uuid} out of cell {cell.name}')
    return None


class HandBackEndpoint:
    """Topic ``cellboot-super-conductor.<cell>`` on one cell's bus."""

    target = oslo_messaging.Target(version=client.VERSION)

    def __init__(self, manager, cell):
        self.manager = manager
        self.cell = cell

    @oslo_messaging.expose
    def hand_back_instance(self, context, instance_uuid=None, **unexpected):
        """Move a build the cell handed back (RPC cast, version 1.0)."""
        if unexpected:
            reason = (f'unexpected arguments '
                      f'{", ".join(sorted(map(str, unexpected)))[:200]}')
        else:
            try:
                reason = start_move(self.manager, _admin(context),
                                    instance_uuid, self.cell)
            except Exception:
                LOG.exception('Hand-back of %s from cell %s failed',
                              instance_uuid, self.cell.name)
                return
        if reason is not None:
            LOG.warning('Refused hand_back_instance(instance_uuid=%.100r) '
                        'from the bus of cell %s: %s', instance_uuid,
                        self.cell.name, reason)


def _admin(context):
    """The super conductor's own rights: what the message's context
    says (a cell may forge it) is kept only for its request id."""
    return cb_context.get_admin_context()


def cross_cell_view(manager):
    """``manager`` as the sweeps of unfinished flows see a manager of
    the cross-cell kind (its ``KIND``, ``LEVEL``, ``persistence`` and
    ``runner``)."""
    return types.SimpleNamespace(
        KIND=kinds.KIND_CROSS_CELL, LEVEL=kinds.SUPER,
        persistence=manager.persistence, runner=manager.cross_cell_runner)


def moving(manager):
    """The instances whose cross-cell flow has not ended: their build
    requests are the move's, not orphans of a boot
    (``cellboot.conductor.orphans``)."""
    if manager.persistence() is None:
        return set()
    return {uuid for flow in records.unfinished(
        manager.persistence(), kinds.KIND_CROSS_CELL, kinds.SUPER,
        warn=False) for uuid in flow.get('instance_uuids') or ()}


class HandedBack:
    """The super conductors' sweep of handed-back builds.

    A hand-back whose cast was lost leaves its build marked in its cell
    and nobody moving it: each sweep starts the move of every build a
    cell holds marked (``start_move``, idempotent). A cross-cell flow
    left unfinished by a conductor that is gone, for longer than
    ``[conductor] orphan_build_request_timeout``, is handed over
    (``unowned_flows``), as the boot flows are.
    """

    def __init__(self, manager):
        self.manager = manager

    def sweep_once(self, context):
        handed = 0
        if self.manager.persistence() is not None:
            cutoff = timeutils.utcnow() - datetime.timedelta(
                seconds=CONF.conductor.orphan_build_request_timeout)
            handed = unowned_flows.hand_over_unowned(
                cross_cell_view(self.manager), cutoff, sweep_lock.Sweep())
        started = 0
        for cell in cell_mapping_obj.CellMapping.get_all(context):
            if cell.uuid == cell_mapping_obj.CELL0_UUID:
                continue
            with cb_context.target_cell(context, cell) as cctxt:
                marked = instance_obj.Instance.get_handed_back(cctxt)
            for instance in marked:
                if start_move(self.manager, context, instance.uuid,
                              cell) is None:
                    started += 1
        return {'moves_started': started, 'moves_handed_over': handed}
