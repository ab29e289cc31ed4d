"""The Nova mirror: nova-api's view of the door's servers kept true.

nova-api shows a server from its own databases: its build request until
its instance mapping names a cell, then the instance in that cell's
Nova-schema database. Nova's conductor and compute write those; with
the door, cellboot builds the server, so cellboot writes them. Every
``[nova] mirror_interval`` s, with ``[nova] api_database_connection``
set, each super conductor makes one pass (``sweep_once``):

1. **place** — nova-api's servers with no cell that cellboot has put in
   a cell (cell0 included): the instance is written in the Nova cell
   database that mirrors that cell (``instance_rows``: from nova-api's
   own build request, in cellboot's state of now, with its fault), then
   nova-api's mapping gets the cell and its build request is removed,
   in one transaction, as Nova's conductor does;
2. **follow** — the Nova instances still in BUILD take the state of
   cellboot's (vm_state, task_state, power state, host, node, launched
   at; the fault of an ERROR);
3. **recover** — a request nova-api wrote whose cast never reached
   cellboot is built from nova-api's rows (``nova_recovery``);
4. **deletes** — a server nova-api deleted is deleted in cellboot, its
   claims released: one deleted while it was a build request (nova-api
   removed the build request), and one deleted in its cell (nova-api's
   "local delete" marks the Nova instance deleted).

Which Nova cell mirrors which cellboot cell: ``[nova] cells``, by name
otherwise; Nova's cell databases are found through Nova's cell mappings.
Every write is idempotent (``cellboot.nova.store``), so a pass cut short
anywhere is finished by the next one, and super conductors mirroring at
once do not write a row twice.
"""

import collections
import datetime

from oslo_log import log as logging

from cellboot.builds import deletes
from cellboot.conductor import nova_recovery
from cellboot.conductor import sweepers
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db.cell import connection as cell_db
from cellboot.nova import instance_rows
from cellboot.nova import primitives
from cellboot.nova import store
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.objects import fault_messages
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_fault
from cellboot.objects import instance_mapping as mapping_obj

LOG = logging.getLogger(__name__)

# Servers looked at per pass and step: a pass stays short; the next one
# takes the rest.
BATCH = 500

# How far back a pass looks for instances nova-api deleted, before the
# start of the pass before: nova-api's clock may be behind cellboot's.
DELETE_SLACK = datetime.timedelta(minutes=5)

# A cellboot cell, the id of the Nova cell that mirrors it, and that Nova
# cell's database engine.
Mirrored = collections.namedtuple('Mirrored', 'cell nova_id engine')


def state_of(instance):
    """The Nova columns that follow a cellboot instance."""
    return instance_rows.state(
        instance.vm_state, instance.task_state, instance.host,
        instance.node, instance.launched_at, instance.availability_zone)


def fault_of(instance, fault, now):
    """The Nova fault row of an instance in ERROR (None otherwise)."""
    if instance.vm_state != 'error' or fault is None:
        return None
    return instance_rows.fault(instance.uuid, fault.code, fault.message,
                               fault.details, fault.host,
                               fault.created_at or now)


class NovaMirror:
    """The mirror's pass; ``manager`` is a super conductor's."""

    def __init__(self, manager, api_connection=None):
        self.manager = manager
        self.api = cell_db.get_engine(
            api_connection or CONF.nova.api_database_connection)
        # Per Nova cell: deletes older than this were handled.
        self._since = {}
        # Build requests found malformed, reported once each.
        self._reported = set()
        self.lost = nova_recovery.LostCasts(manager, self.api,
                                            self._reported)

    def sweep_once(self, context):
        """One pass; counts of ``placed``, ``followed``, ``recovered``
        and ``deleted`` servers."""
        now = store.utcnow()
        cells = self._cells(context)
        placed, recovered, deleted = self._place(context, cells, now)
        followed = 0
        for mirrored in cells.values():
            followed += self._follow(context, mirrored, now)
            deleted += self._deletes(context, mirrored, now)
        return {'placed': placed, 'followed': followed,
                'recovered': recovered, 'deleted': deleted}

    def _cells(self, context):
        """``{cellboot cell uuid: Mirrored}`` of the cells Nova mirrors."""
        nova = store.nova_cells(self.api)
        cells = {}
        for cell in cell_mapping_obj.CellMapping.get_all(context):
            name = ('cell0' if cell.uuid == cell_mapping_obj.CELL0_UUID
                    else CONF.nova.cells.get(cell.name, cell.name))
            if name not in nova:
                LOG.warning('No Nova cell named %s mirrors cellboot cell %s '
                            '([nova] cells): its servers stay in BUILD in '
                            'nova-api', name, cell.name)
                continue
            nova_id, connection = nova[name]
            cells[cell.uuid] = Mirrored(cell, nova_id,
                                        cell_db.get_engine(connection))
        return cells

    @staticmethod
    def _in_cellboot(context, cell, uuids):
        """``{uuid: (instance, fault)}`` of the live ones in a cell."""
        with cb_context.target_cell(context, cell) as cctxt:
            instances = instance_obj.Instance.get_by_uuids(cctxt, uuids)
            faults = instance_fault.InstanceFault.get_latest_for_instances(
                cctxt, [instance.uuid for instance in instances
                        if instance.vm_state == 'error'])
        return {instance.uuid: (instance, faults.get(instance.uuid))
                for instance in instances}

    def _place(self, context, cells, now):
        unplaced = store.unplaced(self.api, BATCH)
        if not unplaced:
            return 0, 0, 0
        mappings = mapping_obj.InstanceMapping.get_by_instance_uuids(
            context, [uuid for uuid, _stored, _created in unplaced])
        deleted = 0
        by_cell = collections.defaultdict(list)
        lost_before = now - datetime.timedelta(
            seconds=CONF.nova.lost_cast_after)
        lost = []
        for uuid, stored, created_at in unplaced:
            mapping = mappings.get(uuid)
            if mapping is None and stored is not None and (
                    created_at is not None and created_at < lost_before):
                lost.append(uuid)
            if mapping is None or mapping.queued_for_delete:
                continue
            if stored is None:
                deleted += self._delete(context, mapping)
            elif mapping.cell_mapping is not None:
                by_cell[mapping.cell_mapping.uuid].append((mapping, stored))
        placed = 0
        for cell_uuid, waiting in by_cell.items():
            mirrored = cells.get(cell_uuid)
            if mirrored is None:
                continue
            found = self._in_cellboot(context, mirrored.cell, [
                mapping.instance_uuid for mapping, _stored in waiting])
            for mapping, stored in waiting:
                if mapping.instance_uuid in found:
                    done = self._place_one(context, mirrored, mapping,
                                           stored, found, now)
                    placed += done == 'placed'
                    deleted += done == 'deleted'
        recovered = 0
        if lost:
            waiting = [uuid for uuid, stored, _c in unplaced
                       if stored is not None]
            recovered = self.lost.recover(
                context, lost,
                lambda uuid, stored, why: self._bury(cells, uuid, stored,
                                                     why, now),
                cut=waiting[-1] if len(waiting) >= BATCH else None)
        return placed, recovered, deleted

    def _place_one(self, context, mirrored, mapping, stored, found, now):
        uuid = mapping.instance_uuid
        instance, fault = found[uuid]
        try:
            rows = instance_rows.rows(stored, now, state_of(instance))
        except primitives.Malformed as exc:
            nova_recovery.report_once(
                self._reported, uuid, 'Server %s: nova-api\'s build request '
                'cannot be mirrored, nova-api keeps showing it in BUILD: %s',
                uuid, exc)
            return None
        store.create_instance(mirrored.engine, rows,
                              fault_of(instance, fault, now))
        if store.place(self.api, uuid, mirrored.nova_id, now):
            return 'placed'
        # nova-api deleted the server meanwhile: what was just written
        # is deleted again, and the server in cellboot.
        LOG.info('Server %s was deleted in nova-api while cellboot built '
                 'it; deleting it', uuid)
        store.soft_delete(mirrored.engine, uuid, now)
        self._delete(context, mapping)
        return 'deleted'

    def _bury(self, cells, uuid, stored, why, now):
        """Show a server cellboot will not build in ERROR in nova-api's
        cell0, with a fault: as Nova buries what it cannot schedule."""
        cell0 = cells.get(cell_mapping_obj.CELL0_UUID)
        if cell0 is None:
            return
        rows = instance_rows.rows(stored, now, instance_rows.state(
            'error', None, None, None, None, None))
        store.create_instance(cell0.engine, rows, instance_rows.fault(
            uuid, 500, fault_messages.INTERNAL_ERROR, f'Server {uuid}: {why}',
            None, now))
        store.place(self.api, uuid, cell0.nova_id, now)
        LOG.error('Server %s is shown in ERROR in nova-api: %s', uuid, why)

    def _follow(self, context, mirrored, now):
        building = store.building(mirrored.engine)
        if not building:
            return 0
        found = self._in_cellboot(context, mirrored.cell, list(building))
        followed = 0
        for uuid, (instance, fault) in found.items():
            state = state_of(instance)
            if all(building[uuid].get(name) == value
                   for name, value in state.items()):
                continue
            followed += store.update_state(
                mirrored.engine, uuid, state, now,
                fault_of(instance, fault, now))
        return followed

    def _deletes(self, context, mirrored, now):
        name = mirrored.cell.uuid
        gone = store.deleted_since(mirrored.engine, self._since.get(name))
        deleted = 0
        for start in range(0, len(gone), BATCH):
            for uuid in self._in_cellboot(context, mirrored.cell,
                                          gone[start:start + BATCH]):
                LOG.info('Server %s was deleted in nova-api; deleting it '
                         'in cellboot', uuid)
                deleted += self._delete(
                    context, mapping_obj.InstanceMapping.
                    get_by_instance_uuid(context, uuid))
        self._since[name] = now - DELETE_SLACK
        return deleted

    def _delete(self, context, mapping):
        """Delete a server in cellboot, as its owner's DELETE would."""
        uuid = mapping.instance_uuid
        if mapping.cell_mapping is None and not mapping.queued_for_delete:
            if deletes.delete_pending(context, uuid):
                return 1
            mapping = mapping_obj.InstanceMapping.get_by_instance_uuid(
                context, uuid)
        if mapping.cell_mapping is not None and not (
                mapping.queued_for_delete):
            deletes.soft_delete_in_cell(context, uuid, mapping.cell_mapping)
            mapping.set_queued_for_delete(context)
        deletes.finish(context, uuid, self.manager.scheduler)
        return 1


class MirrorService:
    """The mirror as one of a super conductor's services.

    A pass every ``[nova] mirror_interval`` s in a daemon thread (the
    sweepers' thread: a failed pass is logged and the next one tries
    again); ``start``, ``stop`` and ``wait`` as an RPC service has them.
    """

    def __init__(self, manager, api_connection=None):
        self.mirror = NovaMirror(manager, api_connection)
        self._sweeper = sweepers.Sweeper([self.mirror],
                                         CONF.nova.mirror_interval,
                                         'Nova mirror')

    def start(self):
        self._sweeper.start()

    def stop(self):
        self._sweeper.stop()

    def wait(self):
        """Nothing to wait for once stopped."""
