"""Unfinished deletes: servers deleted for their owner, not everywhere.

A server in a cell is deleted in idempotent steps
(``cellboot.builds.deletes``); a delete can fail between two of them
(the scheduler or the API database was down) and nobody may retry it.
The super conductor's sweep finishes such deletes:

* servers soft-deleted in their cell whose mapping was never queued for
  delete (the delete failed right after step 1): the mapping is marked,
  which makes them the next case;
* servers queued for delete that still have a build request (it failed
  after step 2): their claims are released and their build request
  removed;
* claims a cell holds that no instance should hold
  (``usage.consumers_without_live_instance``): of an instance deleted in
  the cell, or in ERROR for ``ORPHAN_GRACE`` seconds (whoever set ERROR
  died before its release), or absent from the cell with its mapping
  queued for delete, in another cell, or gone (a placement whose answer
  never reached the API level, a move, a delete cut short): they are
  released, in that cell. An absent one whose mapping has no cell yet
  belongs to a boot in flight and is left to it; one that is an
  allocation request (``allocation_requests``: a claim of a host with
  no server) is its own, settled by ``unplaced_allocations``.

A cell that cannot be read is skipped until the next sweep. Idempotent,
and safe with several conductors sweeping at once.
"""

import datetime


from oslo_log import log as logging

from cellboot.builds import deletes
from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_mapping as mapping_obj
from cellboot.scheduler import allocation_records
from cellboot.scheduler.resources import usage

# Consumers looked at per cell and sweep.
ORPHANS_PER_SWEEP = 500
# Seconds a claim must be old before the sweep takes it for an orphan:
# whoever made it, or set its instance to ERROR, acts first.
ORPHAN_GRACE = 30

LOG = logging.getLogger(__name__)


class UnfinishedDeletes:
    """The check; ``manager`` is a super conductor's (``scheduler``)."""

    def __init__(self, manager):
        self.manager = manager

    def sweep_once(self, context):
        """``{'marked': mappings, 'finished': servers, 'released': claims
        of servers that are gone}``."""
        cells = cell_mapping_obj.CellMapping.get_all(context)
        marked = sum(self._mark(context, cell) for cell in cells)
        released = sum(self._orphans(context, cell) for cell in cells
                       if not cell.is_cell0)
        finished = 0
        for uuid in mapping_obj.InstanceMapping.deleted_with_leftovers(
                context):
            try:
                finished += deletes.finish(context, uuid,
                                           self.manager.scheduler)
            except Exception as exc:
                LOG.warning('Could not finish the delete of server %s yet '
                            '(%s); trying again at the next sweep', uuid,
                            exc)
        return {'marked': marked, 'finished': finished,
                'released': released}

    def _orphans(self, context, cell):
        """Release the claims ``cell`` holds for servers that are gone."""
        before = (datetime.datetime.utcnow() -
                  datetime.timedelta(seconds=ORPHAN_GRACE))
        try:
            with cb_context.target_cell(context, cell) as cctxt:
                uuids = usage.consumers_without_live_instance(
                    cctxt, before, ORPHANS_PER_SWEEP)
        except Exception as exc:
            LOG.warning('Cannot read the claims of cell %s (%s); trying '
                        'again at the next sweep', cell.name, exc)
            return 0
        released = 0
        requests = allocation_records.known(
            context, [uuid for uuid, state in uuids.items()
                      if state == 'absent'])
        for uuid, state in sorted(uuids.items()):
            if uuid in requests:
                continue  # no server's: an allocation request's
            if state != 'absent':
                released += self._release(context, cell, uuid, {
                    'deleted': 'deleted there', 'error': 'in ERROR'}[state])
                continue
            try:
                mapping = mapping_obj.InstanceMapping.get_by_instance_uuid(
                    context, uuid)
            except exception.InstanceMappingNotFound:
                mapping = None
            if mapping is not None and not mapping.queued_for_delete and (
                    mapping.cell_mapping is None
                    or mapping.cell_mapping.uuid == cell.uuid):
                continue  # its build or its cell owns it still
            released += self._release(context, cell, uuid, 'gone from it')
        return released

    def _release(self, context, cell, uuid, why):
        LOG.info('Cell %s holds claims of server %s, which is %s; '
                 'releasing them', cell.name, uuid, why)
        try:
            self.manager.scheduler.release_resources(context, uuid,
                                                     cell_uuid=cell.uuid)
        except Exception as exc:
            LOG.warning('Could not release the claims of server %s in '
                        'cell %s yet (%s); trying again at the next '
                        'sweep', uuid, cell.name, exc)
            return 0
        return 1

    @staticmethod
    def _mark(context, cell):
        """Queue for delete the mappings of the cell's deleted servers."""
        try:
            with cb_context.target_cell(context, cell) as cctxt:
                deleted = instance_obj.Instance.get_deleted_uuids(cctxt)
        except Exception as exc:
            LOG.warning('Cannot read the deleted servers of cell %s (%s); '
                        'trying again at the next sweep', cell.name, exc)
            return 0
        unmarked = mapping_obj.InstanceMapping.not_queued_for_delete(
            context, deleted)
        for uuid in sorted(unmarked):
            LOG.info('Server %s was deleted in cell %s but its delete did '
                     'not finish; finishing it', uuid, cell.name)
            mapping_obj.InstanceMapping.get_by_instance_uuid(
                context, uuid).set_queued_for_delete(context)
        return len(unmarked)
