"""Domain objects: plain classes over the API and cell databases.

Each module holds one object: private reader/writer functions that take
the request context first and speak SQLAlchemy Core, and a small class
on top. Database errors become domain errors (``cellboot.exception``)
here, at the boundary. API-database objects use the API database; cell
objects use the cell that the context is targeted at
(``context.target_cell``) or the local ``[database] connection``.
"""

from cellboot.objects.build_request import BuildRequest  # noqa: F401
from cellboot.objects.cell_mapping import CELL0_UUID  # noqa: F401
from cellboot.objects.cell_mapping import CellMapping  # noqa: F401
from cellboot.objects.compute_node import ComputeNode  # noqa: F401
from cellboot.objects.flavor import Flavor  # noqa: F401
from cellboot.objects.host_mapping import HostMapping  # noqa: F401
from cellboot.objects.instance import Instance  # noqa: F401
from cellboot.objects.instance import vm_states  # noqa: F401
from cellboot.objects.instance_action import InstanceAction  # noqa: F401
from cellboot.objects.instance_action import (  # noqa: F401
    InstanceActionEvent)
from cellboot.objects.instance_fault import InstanceFault  # noqa: F401
from cellboot.objects.instance_mapping import InstanceMapping  # noqa: F401
from cellboot.objects.request_spec import RequestSpec  # noqa: F401
from cellboot.objects.service import Service  # noqa: F401
