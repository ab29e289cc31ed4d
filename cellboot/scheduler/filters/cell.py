"""CellFilter: only the cell named by the ``target_cell`` hint."""

import numpy as np

from cellboot.scheduler.filters import base


class CellFilter(base.BaseHostFilter):
    """Prunes every cell but the one the ``target_cell`` hint names.

    The hint takes a cell uuid or name (``resolve`` turns a name into the
    uuid). Works on cells only, so the other cells' hosts cost nothing.
    """

    def cell_mask(self, states, request):
        if not request.target_cell:
            return None
        mask = np.zeros(len(states.cells.names), dtype=bool)
        code = states.cell_code(request.target_cell)
        if code is not None:
            mask[code] = True
        return mask

    def describe(self, request):
        return (f'target_cell {request.target_cell} (an enabled cell with '
                f'hosts) asked for')
