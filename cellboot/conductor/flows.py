"""How a conductor runs its flows: itself, or through its jobboard.

``FlowConductorBase`` is what the super conductor and the cell
conductors (``cellboot.conductor.manager``) share: each request's flow
is saved once under its deterministic uuid (``engine.flow_uuid``), then
run here (no jobboard) or posted as a job on the kind's board for
whichever conductor claims it (``cellboot.workflows.jobboard``); what
the periodic checks (``cellboot.conductor.sweepers``) find unowned is
given back with ``hand_over``. See the manager module for the whole
picture.
"""

import threading

from oslo_log import log as logging
from oslo_serialization import jsonutils

from cellboot.conductor import sweepers
from cellboot.conf import CONF
from cellboot.conf import jobboard as jobboard_conf
from cellboot import exception
from cellboot.workflows import engine
from cellboot.workflows import jobboard
from cellboot.workflows import kinds

LOG = logging.getLogger(__name__)

KIND_BOOT = jobboard.KIND_BOOT
KIND_RESCHEDULE = jobboard.KIND_RESCHEDULE

# Failures that end a flow the expected way (logged as one line).
_EXPECTED_FAILURES = (exception.NoValidHost,)


def _log_outcome(what, exc):
    if isinstance(exc, _EXPECTED_FAILURES):
        LOG.info('%s ended: %s', what, exc)
    elif isinstance(exc, kinds.CorruptFlow):
        LOG.warning('%s refused: %s', what, exc)
    elif isinstance(exc, exception.CellbootException):
        LOG.warning('%s failed: %s', what, exc)
    else:
        LOG.exception('%s failed unexpectedly', what)


class FlowConductorBase:
    """What both conductors share: running, posting and resuming flows.

    ``KIND`` is the kind of flow this conductor creates and posts;
    ``LEVEL`` (``kinds.SUPER`` or ``kinds.CELL``) says which flows it
    runs: those of its level's kinds, from its own database; any other
    (corrupt) flow it is handed is refused with a WARNING.
    ``board`` is the connected jobboard of this conductor's kind once
    ``start`` ran with ``[jobboard] backend = redis``, else None.
    """

    KIND = None
    LEVEL = None

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
        # Posted, not held: whichever conductor claims it takes it over
        # (``engine.take_over``).
        meta = engine.flow_meta(self.KIND, instance_uuids, context,
                                owner=self.owner, posted=True)
        try:
            flow_detail, created = engine.create(
                self.KIND, jsonutils.to_primitive(store),
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
                self.KIND, store, self.transient_for(context),
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

    def run_persisted(self, flow_detail, extra_listeners=()):
        """Run a saved flow to its end (first run or resumption).

        Never raises; the jobboard conductor reads the outcome from
        ``flow_detail.state``. Returns False, without running it, when
        this process runs that flow already (one engine per flow).
        ``extra_listeners`` are attached besides ``flow_listeners``.
        """
        what = f'{self.KIND.capitalize()} flow {flow_detail.uuid}'
        with self._running_lock:
            if flow_detail.uuid in self._running:
                return False
            self._running.add(flow_detail.uuid)
        try:
            self._run_detail(what, flow_detail, extra_listeners)
        finally:
            with self._running_lock:
                self._running.discard(flow_detail.uuid)
        return True

    def _run_detail(self, what, flow_detail, extra_listeners=()):
        try:
            engine.run_detail(
                self.persistence(), flow_detail, self.transient_for,
                self.LEVEL, extra_listeners=tuple(self.flow_listeners) +
                tuple(extra_listeners), owner=self.owner)
        except Exception as exc:
            _log_outcome(what, exc)

    def _resume(self, flow_uuid, counted=False):
        """Load and run flow ``flow_uuid``.

        ``counted``: the caller has put it in ``_running`` already (a
        flow handed over).
        """
        try:
            flow_detail = engine.load_detail(self.persistence(), flow_uuid)
        except Exception as exc:
            _log_outcome(f'Loading {self.KIND} flow {flow_uuid}', exc)
            return
        if counted:
            self._run_detail(f'{self.KIND.capitalize()} flow {flow_uuid}',
                             flow_detail)
        else:
            self.run_persisted(flow_detail)

    def resume_unfinished(self):
        """Finish the flows this host's conductor left; how many there were.

        Each resumed flow ends SUCCESS or REVERTED, like any other run;
        one that fails again is logged and the others still run.
        """
        persistence = self.persistence()
        if persistence is None or not CONF.conductor.resume_flows:
            return 0
        flows = engine.unfinished(persistence, self.KIND, self.LEVEL,
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
            # Idempotent, even against another conductor's hand_over at
            # the same moment: one job per flow (``jobboard.post``).
            return jobboard.post(self.board, self.KIND,
                                 flow_uuid) is not None
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
            self._resume(flow_uuid, counted=True)
        finally:
            with self._running_lock:
                self._running.discard(flow_uuid)
