"""Unfinished deletes: servers deleted for their owner, not everywhere.

A server in a cell is deleted in idempotent steps
(``cellboot.builds.deletes``); a delete can fail between two of them
(the scheduler or the API database was down) and nobody may retry it.
The super conductor's sweep finishes such deletes:

* servers soft-deleted in their cell whose mapping was never queued for
  delete (the delete failed right after step 1): the mapping is marked,
  which makes them the next case;
* servers queued for delete that still hold claims or a build request
  (it failed after step 2): their claims are released and their build
  request removed.

A cell that cannot be read is skipped until the next sweep. Idempotent,
and safe with several conductors sweeping at once.
"""

from oslo_log import log as logging

from cellboot.builds import deletes
from cellboot import context as cb_context
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_mapping as mapping_obj

LOG = logging.getLogger(__name__)


class UnfinishedDeletes:
    """The check; ``manager`` is a super conductor's (``scheduler``)."""

    def __init__(self, manager):
        self.manager = manager

    def sweep_once(self, context):
        """``{'marked': mappings, 'finished': servers}``."""
        marked = sum(self._mark(context, cell) for cell in
                     cell_mapping_obj.CellMapping.get_all(context))
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
        return {'marked': marked, 'finished': finished}

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
