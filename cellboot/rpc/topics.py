"""Topic names: who listens where on a bus.

Clients and servers both take their topics from here, so a name cannot
drift between the two ends. Every topic used inside a cell carries the
cell's name: cells may share one transport (one broker, one vhost), and a
cast meant for cell1's conductor or for a compute host of cell1 must never
reach a service of cell2 (hosts of two cells may even share a name).
"""

from cellboot import exception

# The super conductor, on the API transport.
CONDUCTOR = 'cellboot-conductor'

# The API level's scheduler as a service, on the API transport (for
# super conductors with [conductor] scheduler = rpc).
SCHEDULER = 'cellboot-scheduler'

# Per-cell topics: '<prefix>.<cell name>'.
_CELL_CONDUCTOR = 'cellboot-conductor'
_COMPUTE = 'cellboot-compute'
_CELL_SCHEDULER = 'cellboot-scheduler'
_SUPER_CONDUCTOR = 'cellboot-super-conductor'


def _in_cell(prefix, cell_name):
    if not cell_name:
        raise exception.ConfigurationError(
            reason=f'{prefix} topics are per cell but no cell name was '
                   f'given; set [DEFAULT] cell_name to the name of this '
                   f'service\'s cell (as in `cellboot-manage cell_v2 '
                   f'list_cells`)')
    return f'{prefix}.{cell_name}'


def cell_conductor(cell_name):
    """The topic of the conductors of cell ``cell_name``."""
    return _in_cell(_CELL_CONDUCTOR, cell_name)


def compute(cell_name):
    """The topic of the compute hosts of cell ``cell_name`` (server=host)."""
    return _in_cell(_COMPUTE, cell_name)


def scheduler(cell_name):
    """The topic of the schedulers of cell ``cell_name``, on its bus.

    They hold that cell's database only, so what arrives there can act
    on that cell's providers and allocations and nothing else.
    """
    return _in_cell(_CELL_SCHEDULER, cell_name)


def super_conductor(cell_name):
    """The topic of the super conductors on cell ``cell_name``'s bus.

    Where the cell's conductors hand back the builds they cannot place
    (``hand_back_instance``): the super conductors serve it on each
    cell's bus with that cell's rights only.
    """
    return _in_cell(_SUPER_CONDUCTOR, cell_name)
