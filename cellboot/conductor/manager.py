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
(``engine.flow_uuid``) and is saved only once, whoever receives the
cast and however often. Then:

* without a jobboard (``[jobboard] backend = none``), the endpoint runs
  the flow itself; at start (``start``) a conductor resumes the flows
  that a conductor of the same host left unfinished;
* with one (``redis``), the endpoint posts a job for the flow on its
  kind's board and returns; the conductor thread of every conductor
  process of that kind claims jobs and runs their flows
  (``cellboot.workflows.jobboard``), so that a survivor resumes the
  flows of a conductor that died.

``start`` also starts the periodic checks (``cellboot.conductor.
sweepers``); ``hand_over`` is how they give an unfinished flow that
nobody runs back to a conductor.
"""

import threading

from oslo_log import log as logging
import oslo_messaging
from oslo_serialization import jsonutils

from cellboot.conf import CONF
from cellboot.conductor import sweepers
from cellboot.conf import conductor as conductor_conf
from cellboot.conf import jobboard as jobboard_conf
from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot import rpc
from cellboot.workflows import boot
from cellboot.workflows import engine
from cellboot.workflows import jobboard
from cellboot.workflows import reschedule

LOG = logging.getLogger(__name__)

# Every RPC interface of cellboot is at its first version.
RPC_VERSION = '1.0'

KIND_BOOT = 'boot'
KIND_RESCHEDULE = 'reschedule'

# Failures that end a flow the expected way (logged as one line).
_EXPECTED_FAILURES = (exception.NoValidHost,)


def _log_outcome(what, exc):
    if isinstance(exc, _EXPECTED_FAILURES):
        LOG.info('%s ended: %s', what, exc)
    elif isinstance(exc, exception.CellbootException):
        LOG.warning('%s failed: %s', what, exc)
    else:
        LOG.exception('%s failed unexpectedly', what)


class _FlowConductor:
    """What both conductors share: running, posting and resuming flows.

    ``board`` is the connected jobboard of this conductor's kind once
    ``start`` ran with ``[jobboard] backend = redis``, else None.
    """

    KIND = None
    FLOW_FACTORY = None

    # Callables ``engine -> taskflow Listener`` attached to every run
    # besides the logging and timing ones: a hook for tests that act
    # between two atoms.
    flow_listeners = ()

    def __init__(self):
        self.board = None
        self._flow_conductor = None
        self._sweeper = None
        # Flows this process runs now (embedded ``hand_over``), and the
        # threads resuming the flows handed over.
        self._running = set()
        self._running_lock = threading.Lock()
        self._resumers = []
        self._owner = None

    @property
    def owner(self):
        """This conductor's name, as flows and claims record it.

        ``HOST:PID`` (``engine.owner_name``); in-process tests running
        several conductors give each a name of its own (before
        ``start``).
        """
        return self._owner or engine.owner_name()

    @owner.setter
    def owner(self, name):
        self._owner = name

    def persistence(self):
        """The database URL flows are persisted in, None if they are not."""
        raise NotImplementedError

    def transient_for(self, context):
        """The values a flow needs that are never persisted."""
        raise NotImplementedError

    def _board_cell(self):
        """The cell whose board this conductor uses (None: the boot board)."""
        return None

    # -- starting and stopping ---------------------------------------------

    def _uses_jobboard(self):
        if CONF.jobboard.backend != jobboard_conf.REDIS:
            return False
        if self.persistence() is None:
            LOG.warning('[jobboard] backend = redis needs persisted flows '
                        '([conductor] persist_flows): running the %s flows '
                        'without the jobboard', self.KIND)
            return False
        return True

    def _start_flows(self):
        """Start the jobboard conductor, or resume unfinished flows."""
        resumed = 0
        if self._uses_jobboard():
            self.board = jobboard.connect(self.KIND, self.persistence(),
                                          cell_name=self._board_cell())
            self._flow_conductor = jobboard.start_conductor(self, self.board)
            LOG.info('Conductor %s takes %s jobs from board %s', self.owner,
                     self.KIND, self.board.name)
        else:
            resumed = self.resume_unfinished()
        self._sweeper = sweepers.start_for(self)
        return resumed

    def _stop_flows(self):
        """Stop sweeping and claiming; let the flows under way finish."""
        if self._sweeper is not None:
            self._sweeper.stop()
            self._sweeper = None
        if self._flow_conductor is not None:
            self._flow_conductor.stop()
            self._flow_conductor.wait()
            self._flow_conductor = None
        if self.board is not None:
            self.board.close()
            self.board = None
        while self._resumers:
            self._resumers.pop().join()

    # -- running flows -----------------------------------------------------

    def start_flow(self, context, store, instance_uuids, key, what):
        """Run, or post, the flow of one request; never raises.

        ``key`` identifies the request (``engine.flow_uuid``): a flow
        that exists already is neither run nor posted again.
        """
        if self.board is None:
            return self.run_flow(context, store, instance_uuids, key, what)
        meta = engine.flow_meta(self.KIND, instance_uuids, context,
                                owner=self.owner)
        try:
            flow_detail, created = engine.create(
                type(self).FLOW_FACTORY, jsonutils.to_primitive(store),
                self.persistence(), uuid_=engine.flow_uuid(self.KIND, key),
                book_name=self._book_name(context), meta=meta)
        except Exception as exc:
            _log_outcome(what, exc)
            return None
        if not created:
            LOG.info('%s: flow %s exists already (%s), not posted again',
                     what, flow_detail.uuid, flow_detail.state)
            return None
        try:
            jobboard.post(self.board, self.KIND, flow_detail.uuid,
                          self._book_name(context))
        except Exception as exc:
            # The flow is saved: the sweeper posts it again later.
            LOG.error('%s: could not post flow %s on board %s: %s',
                      what, flow_detail.uuid, self.board.name, exc)
        return None

    def _book_name(self, context):
        return f'{self.KIND} {context.request_id}'

    def run_flow(self, context, store, instance_uuids, key, what):
        """Run one flow to its end; never raises (see the module doc)."""
        meta = engine.flow_meta(self.KIND, instance_uuids, context,
                                owner=self.owner)
        # What is persisted must be JSON (PostgreSQL's JSON columns take
        # no datetime): as it would have arrived over RPC.
        store = jsonutils.to_primitive(store)
        flow_uuid = engine.flow_uuid(self.KIND, key)
        with self._running_lock:
            self._running.add(flow_uuid)
        try:
            return engine.run(
                type(self).FLOW_FACTORY, store, self.transient_for(context),
                persistence=self.persistence(),
                book_name=self._book_name(context), meta=meta,
                label=what, extra_listeners=self.flow_listeners,
                uuid_=flow_uuid)
        except Exception as exc:
            _log_outcome(what, exc)
            return None
        finally:
            with self._running_lock:
                self._running.discard(flow_uuid)

    def run_persisted(self, flow_detail):
        """Run a saved flow to its end (first run or resumption).

        Never raises; the jobboard conductor reads the outcome from
        ``flow_detail.state``.
        """
        what = f'{self.KIND.capitalize()} flow {flow_detail.uuid}'
        with self._running_lock:
            self._running.add(flow_detail.uuid)
        try:
            engine.run_detail(self.persistence(), flow_detail,
                              self.transient_for,
                              extra_listeners=self.flow_listeners,
                              owner=self.owner)
        except Exception as exc:
            _log_outcome(what, exc)
        finally:
            with self._running_lock:
                self._running.discard(flow_detail.uuid)

    def _resume(self, flow_uuid):
        try:
            flow_detail = engine.load_detail(self.persistence(), flow_uuid)
        except Exception as exc:
            _log_outcome(f'Loading {self.KIND} flow {flow_uuid}', exc)
            return
        self.run_persisted(flow_detail)

    def resume_unfinished(self):
        """Finish the flows this host's conductor left; how many there were.

        Each resumed flow ends SUCCESS or REVERTED, like any other run;
        one that fails again is logged and the others still run.
        """
        persistence = self.persistence()
        if persistence is None or not CONF.conductor.resume_flows:
            return 0
        flows = engine.unfinished(persistence, self.KIND,
                                  conductor=CONF.host)
        for flow in flows:
            self._resume(flow['uuid'])
        return len(flows)

    def hand_over(self, flow_uuid):
        """Make sure that unfinished flow ``flow_uuid`` gets run.

        With a jobboard, a job is posted for it unless one is on the
        board already; without, it is resumed in a thread of this
        process unless this process runs it now. Returns False when
        nothing had to be done.
        """
        if self.board is not None:
            if flow_uuid in jobboard.referenced_flow_uuids(self.board):
                return False
            jobboard.post(self.board, self.KIND, flow_uuid)
            return True
        with self._running_lock:
            if flow_uuid in self._running:
                return False
            # Counted as running from now: a second hand_over before the
            # thread starts must not resume it twice.
            self._running.add(flow_uuid)
        thread = threading.Thread(target=self._resume_handed_over,
                                  args=(flow_uuid,), daemon=True,
                                  name=f'resume {flow_uuid}')
        self._resumers = [t for t in self._resumers if t.is_alive()]
        self._resumers.append(thread)
        thread.start()
        return True

    def _resume_handed_over(self, flow_uuid):
        try:
            self._resume(flow_uuid)
        finally:
            with self._running_lock:
                self._running.discard(flow_uuid)


class SuperConductorManager(_FlowConductor):
    """Endpoint of topic ``cellboot-conductor``: boots, one flow each.

    ``scheduler`` is the scheduler library (``[conductor] scheduler =
    local``) or its RPC client (``rpc``); ``compute_rpcapi_for`` returns
    the compute client of a cell mapping. Both default to what the
    configuration says; tests and the all-in-one pass their own.
    """

    target = oslo_messaging.Target(version=RPC_VERSION)

    KIND = KIND_BOOT
    FLOW_FACTORY = staticmethod(boot.get_flow)

    def __init__(self, scheduler=None, compute_rpcapi_for=None):
        super().__init__()
        self.scheduler = scheduler or self._configured_scheduler()
        self._owns_scheduler = scheduler is None
        self._compute_rpcapi_for = compute_rpcapi_for
        self._compute_clients = {}

    @staticmethod
    def _configured_scheduler():
        if CONF.conductor.scheduler == conductor_conf.RPC:
            from cellboot.scheduler import rpcapi as scheduler_rpcapi
            return scheduler_rpcapi.SchedulerRPCAPI(rpc.get_api_transport())
        from cellboot.scheduler import api as scheduler_api
        return scheduler_api.SchedulerAPI()

    def start(self, context=None):
        """Load the in-process scheduler's host states, then take work.

        Resumes this host's unfinished flows (no jobboard) or starts
        claiming jobs (jobboard), and starts the periodic checks.
        Returns how many flows were resumed.
        """
        context = context or cb_context.get_admin_context()
        if self._owns_scheduler and hasattr(self.scheduler, 'start'):
            self.scheduler.start(context)
        return self._start_flows()

    def stop(self):
        """Stop the checks and the claiming; running flows finish first."""
        self._stop_flows()
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
        return {'context': context, 'scheduler': self.scheduler,
                'compute_rpcapi': self.compute_rpcapi}

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
        self.start_flow(context, store, uuids,
                        engine.boot_flow_key(build_requests),
                        f'Boot of {len(uuids)} instance(s) for request '
                        f'{context.request_id}')


class CellConductorManager(_FlowConductor):
    """Endpoint of topic ``cellboot-conductor.<cell>``: reschedules.

    ``cell_name`` and ``database_connection`` default to ``[DEFAULT]
    cell_name`` and ``[database] connection``; an in-process cluster
    gives each of its cells' conductors its own. ``scheduler`` and
    ``compute_rpcapi`` are RPC clients on the cell's transport.
    """

    target = oslo_messaging.Target(version=RPC_VERSION)

    KIND = KIND_RESCHEDULE
    FLOW_FACTORY = staticmethod(reschedule.get_flow)

    def __init__(self, cell_name=None, database_connection=None,
                 scheduler=None, compute_rpcapi=None):
        super().__init__()
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
        transport = None
        if scheduler is None or compute_rpcapi is None:
            transport = rpc.get_local_cell_transport()
        if scheduler is None:
            from cellboot.scheduler import rpcapi as scheduler_rpcapi
            scheduler = scheduler_rpcapi.SchedulerRPCAPI(transport)
        if compute_rpcapi is None:
            from cellboot.compute import rpcapi as compute_rpcapi_mod
            compute_rpcapi = compute_rpcapi_mod.ComputeAPI(cell_name,
                                                           transport)
        self.scheduler = scheduler
        self.compute_rpcapi = compute_rpcapi

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
        self.start_flow(context, store, [instance['uuid']],
                        engine.reschedule_flow_key(instance['uuid'], retry),
                        f'Reschedule of instance {instance["uuid"]} in cell '
                        f'{self.cell_name}')
