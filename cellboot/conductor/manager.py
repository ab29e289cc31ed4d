"""The conductors' RPC endpoints: each request becomes one flow run.

* ``SuperConductorManager`` (topic ``cellboot-conductor``, API level):
  ``schedule_and_build_instances`` runs the boot flow of one request,
  persisted in the flow database.
* ``CellConductorManager`` (topic ``cellboot-conductor.<cell>``):
  ``build_instances`` runs the reschedule flow of one instance,
  persisted in its own cell's database. It holds no API database
  credentials: the scheduler is reached over RPC and the cell is known
  from ``[DEFAULT] cell_name`` and ``[database] connection``.

Both are casts: nobody waits for an answer, so an endpoint never raises.
A flow that reverted has already recorded the outcome where users and
operators look (ERROR instances with faults, the flow's state); the
endpoint only logs it.

Each request's flow has a uuid derived from the request
(``records.flow_uuid``) and is saved only once, whoever receives the
cast and however often. Then:

* without a jobboard (``[jobboard] backend = none``), the endpoint runs
  the flow itself; at start (``start``) a conductor resumes the flows
  that a conductor of the same host left unfinished;
* with one (``redis``), the endpoint posts a job for the flow on its
  kind's board and returns; the conductor thread of every conductor
  process of that kind claims jobs and runs their flows
  (``cellboot.flowrun.jobboard``), so that a survivor resumes the
  flows of a conductor that died.

``start`` also starts the periodic checks (``cellboot.conductor.
sweepers``); ``hand_over`` is how they give an unfinished flow that
nobody runs back to a conductor.
"""

from oslo_log import log as logging
import oslo_messaging

from cellboot.conductor import sweepers
from cellboot.conf import CONF
from cellboot.conf import conductor as conductor_conf
from cellboot import context as cb_context
from cellboot import exception
from cellboot.flowrun import kinds
from cellboot.flowrun import records
from cellboot.flowrun import runner
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot import rpc
from cellboot.workflows import boot

LOG = logging.getLogger(__name__)

# Every RPC interface of cellboot is at its first version.
RPC_VERSION = '1.0'


class _FlowManager:
    """What both conductor managers share: a runner, and the sweeper.

    ``KIND`` is the kind of flow the manager creates, ``LEVEL`` the
    level of the flows it runs (``cellboot.flowrun.kinds``); ``runner``
    (``cellboot.flowrun.runner.Runner``) runs them.
    """

    KIND = None
    LEVEL = None

    def __init__(self):
        self.runner = runner.Runner(self.KIND, self.LEVEL, self.persistence,
                                    self.transient_for,
                                    board_cell=self._board_cell())
        self._sweeper = None

    def persistence(self):
        """The database URL flows are persisted in, None if they are not."""
        raise NotImplementedError

    def transient_for(self, context):
        """The values a flow needs that are never persisted."""
        raise NotImplementedError

    def _board_cell(self):
        """The cell whose board this manager uses (None: the boot board)."""
        return None

    def _start_flows(self):
        """Take work (resume, or claim jobs), then start the checks."""
        resumed = self.runner.open()
        self._sweeper = sweepers.start_for(self)
        return resumed

    def _stop_flows(self):
        """Stop sweeping and claiming; let the flows under way finish."""
        if self._sweeper is not None:
            self._sweeper.stop()
            self._sweeper = None
        self.runner.close()


class SuperConductorManager(_FlowManager):
    """Endpoint of topic ``cellboot-conductor``: boots, one flow each.

    ``scheduler`` is the API level's scheduler (``[conductor] scheduler
    = local``: in-process, reaching the cells' schedulers over their
    buses) or its RPC client (``rpc``); ``compute_rpcapi_for`` returns
    the compute client of a cell mapping. Both default to what the
    configuration says; tests and the all-in-one pass their own.
    """

    target = oslo_messaging.Target(version=RPC_VERSION)

    KIND = kinds.KIND_BOOT
    LEVEL = kinds.SUPER

    def __init__(self, scheduler=None, compute_rpcapi_for=None):
        super().__init__()
        # The cross-cell flows (builds a cell handed back), in the same
        # flow database (``cellboot.conductor.handbacks``).
        self.cross_cell_runner = runner.Runner(
            kinds.KIND_CROSS_CELL, self.LEVEL, self.persistence,
            self.transient_for)
        self.scheduler = scheduler or self._configured_scheduler()
        self._owns_scheduler = scheduler is None
        self._compute_rpcapi_for = compute_rpcapi_for
        self._compute_clients = {}

    @staticmethod
    def _configured_scheduler():
        if CONF.conductor.scheduler == conductor_conf.RPC:
            from cellboot.scheduler import rpcapi as scheduler_rpcapi
            return scheduler_rpcapi.SchedulerRPCAPI(rpc.get_api_transport())
        from cellboot.scheduler import cells as cells_scheduler
        return cells_scheduler.CellsScheduler()

    def start(self, context=None):
        """Read the cells' aggregates (in-process scheduler), take work.

        Resumes this host's unfinished flows (no jobboard) or starts
        claiming jobs (jobboard), and starts the periodic checks.
        Returns how many flows were resumed.
        """
        context = context or cb_context.get_admin_context()
        if self._owns_scheduler and hasattr(self.scheduler, 'start'):
            self.scheduler.start(context)
        return self.cross_cell_runner.open() + self._start_flows()

    def stop(self):
        """Stop the checks and the claiming; running flows finish first."""
        self._stop_flows()
        self.cross_cell_runner.close()
        if self._owns_scheduler and hasattr(self.scheduler, 'stop'):
            self.scheduler.stop()

    def compute_rpcapi(self, cell_mapping):
        """The compute client of a cell (one per cell, reused)."""
        if self._compute_rpcapi_for is not None:
            return self._compute_rpcapi_for(cell_mapping)
        client = self._compute_clients.get(cell_mapping.uuid)
        if client is None:
            from cellboot.compute import rpcapi as compute_rpcapi
            client = compute_rpcapi.ComputeAPI(
                cell_mapping.name, rpc.get_cell_transport(cell_mapping))
            self._compute_clients[cell_mapping.uuid] = client
        return client

    def persistence(self):
        if not CONF.conductor.persist_flows:
            return None
        return CONF.flow_persistence.connection

    def transient_for(self, context):
        return boot.values_for_run(context, self.scheduler,
                                   self.compute_rpcapi)

    @oslo_messaging.expose
    def schedule_and_build_instances(self, context, build_requests,
                                     request_specs):
        """Run the boot flow for one request (RPC cast, version 1.0).

        ``build_requests`` and ``request_specs`` are aligned lists (see
        ``cellboot.conductor.rpcapi``); the instances of a multi-create
        share one spec, which the scheduler is asked once.
        """
        if not build_requests:
            return
        if not request_specs or len(request_specs) != len(build_requests):
            LOG.error('Request %s is malformed: %d build requests but %d '
                      'request specs; nothing is built.',
                      context.request_id, len(build_requests),
                      len(request_specs or ()))
            return
        uuids = [br['instance_uuid'] for br in build_requests]
        store = {
            'instance_uuids': uuids,
            'build_requests': {br['instance_uuid']: br
                               for br in build_requests},
            'request_spec': request_specs[0],
        }
        self.runner.start(context, store, uuids,
                          records.boot_flow_key(build_requests),
                          f'Boot of {len(uuids)} instance(s) for request '
                          f'{context.request_id}')


class CellConductorManager(_FlowManager):
    """Endpoint of topic ``cellboot-conductor.<cell>``: reschedules.

    ``cell_name`` and ``database_connection`` default to ``[DEFAULT]
    cell_name`` and ``[database] connection``; an in-process cluster
    gives each of its cells' conductors its own. ``scheduler`` and
    ``compute_rpcapi`` are RPC clients on the cell's transport (the
    scheduler's on the cell's own topic, ``cellboot-scheduler.<cell>``).
    """

    target = oslo_messaging.Target(version=RPC_VERSION)

    KIND = kinds.KIND_RESCHEDULE
    LEVEL = kinds.CELL

    def __init__(self, cell_name=None, database_connection=None,
                 scheduler=None, compute_rpcapi=None, handback_rpcapi=None):
        cell_name = cell_name or CONF.cell_name
        database_connection = (database_connection or
                               CONF.database.connection)
        if not cell_name:
            raise exception.ConfigurationError(
                reason='a cell conductor needs the name of its cell: '
                       'cellboot-conductor --cell NAME, or [DEFAULT] '
                       'cell_name')
        if not database_connection:
            raise exception.ConfigurationError(
                reason=f'the conductor of cell {cell_name} needs its '
                       f'cell database in [database] connection')
        # This cell as far as its own services know it: no uuid, which
        # only the API database holds.
        self.cell_mapping = cell_mapping_obj.CellMapping(
            name=cell_name, database_connection=database_connection)
        super().__init__()
        transport = None
        if scheduler is None or compute_rpcapi is None or \
                handback_rpcapi is None:
            transport = rpc.get_local_cell_transport()
        if scheduler is None:
            from cellboot.scheduler import rpcapi as scheduler_rpcapi
            scheduler = scheduler_rpcapi.CellSchedulerRPCAPI(
                transport, cell_name)
        if compute_rpcapi is None:
            from cellboot.compute import rpcapi as compute_rpcapi_mod
            compute_rpcapi = compute_rpcapi_mod.ComputeAPI(cell_name,
                                                           transport)
        if handback_rpcapi is None:
            from cellboot.conductor import rpcapi as conductor_rpcapi
            handback_rpcapi = conductor_rpcapi.HandBackAPI(cell_name,
                                                           transport)
        self.scheduler = scheduler
        self.compute_rpcapi = compute_rpcapi
        self.handback_rpcapi = handback_rpcapi

    @property
    def cell_name(self):
        return self.cell_mapping.name

    def start(self, context=None):
        """Take work (resume, or claim jobs) and start the checks.

        Returns how many flows were resumed.
        """
        return self._start_flows()

    def stop(self):
        """Stop the checks and the claiming; running flows finish first."""
        self._stop_flows()

    def _board_cell(self):
        return self.cell_name

    def persistence(self):
        if not CONF.conductor.persist_flows:
            return None
        return self.cell_mapping.database_connection

    def transient_for(self, context):
        return {'context': context, 'scheduler': self.scheduler,
                'compute_rpcapi': lambda _cell: self.compute_rpcapi,
                'handback_rpcapi': self.handback_rpcapi,
                'cell_mapping': self.cell_mapping}

    @oslo_messaging.expose
    def build_instances(self, context, instance, request_spec, host_list,
                        retry):
        """Run the reschedule flow for one instance (RPC cast, 1.0)."""
        retry = dict(retry or {})
        retry.setdefault('num_attempts', 0)
        retry.setdefault('hosts', [])
        store = {
            'instance': instance,
            'request_spec': request_spec,
            'host_list': list(host_list or []),
            'build_retry': retry,
            'max_attempts': CONF.scheduler.max_attempts,
        }
        self.runner.start(context, store, [instance['uuid']],
                          records.reschedule_flow_key(instance['uuid'], retry),
                          f'Reschedule of instance {instance["uuid"]} in cell '
                          f'{self.cell_name}')
