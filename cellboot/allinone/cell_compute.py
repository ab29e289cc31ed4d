"""A compute host of one cell among several in one process.

A real ``cellboot-compute`` reads its cell's database from its own
``[database] connection``; in ``cellboot all-in-one`` one configuration
serves every cell, so each host is told its cell and targets the
contexts it works with at it. Apart from ``deployment`` (which
composes the hosts) so that the composition reads as a list of services.
"""

from cellboot.compute import manager as compute_manager
from cellboot import context as cb_context


class CellComputeManager(compute_manager.ComputeManager):
    """A compute manager bound to one cell of a multi-cell process.

    A real compute host reads its cell's database from its own
    ``[database] connection``; here every context it is given (a build
    cast over the bus, a heartbeat's admin context) is targeted at its
    cell first.
    """

    def __init__(self, cell_mapping, *args, **kwargs):
        super().__init__(*args, cell_name=cell_mapping.name, **kwargs)
        self.cell_mapping = cell_mapping

    def _targeted(self, context):
        return cb_context.targeted_copy(context, self.cell_mapping)

    def report_state(self, context):
        super().report_state(self._targeted(context))

    def build_and_run_instance(self, context, *args, **kwargs):
        super().build_and_run_instance(self._targeted(context), *args,
                                       **kwargs)
