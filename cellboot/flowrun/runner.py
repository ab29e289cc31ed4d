"""The one way cellboot runs a flow: a runner and its three verbs.

A conductor manager (``cellboot.conductor.manager``) holds one runner
for the kind of flow it creates. Every flow goes through one of:

* ``start`` — a new request's flow: saved once under its deterministic
  uuid (``records.flow_uuid``, ``new_flows``), then run here (no
  jobboard) or posted as a job on the kind's board
  (``cellboot.flowrun.jobboard``) for whichever conductor claims it.
  Unpersisted flows (``[conductor] persist_flows = False``) are run in
  memory.
* ``run_saved`` — a saved flow, to its end: its first run or a
  resumption (``records.take_over`` decides, and records the new
  owner). The jobboard conductor (``cellboot.flowrun.conductor``), the
  resumption of this host's unfinished flows at start
  (``resume_unfinished``) and ``hand_over`` all end here.
* ``hand_over`` — an unfinished flow nobody runs (what the periodic
  checks find): posted again (jobboard) or resumed in a thread.

One engine per flow in a process: ``_running`` holds the flows this
process runs now; a second ``run_saved`` of one of them is refused.
Across processes, each run of a saved flow holds a fencing token
(``cellboot.flowrun.fencing``): a run whose flow was taken over by
another one stops at its next write, records nothing, and is logged
once (WARNING).
"""

import threading

from oslo_log import log as logging
from oslo_serialization import jsonutils

from cellboot.conf import CONF
from cellboot.conf import jobboard as jobboard_conf
from cellboot.flowrun import backend as flow_db
from cellboot import exception
from cellboot.flowrun import conductor as flow_conductor
from cellboot.flowrun import engine as flow_engine
from cellboot.flowrun import fencing
from cellboot.flowrun import flow_states
from cellboot.flowrun import jobboard
from cellboot.flowrun import kinds
from cellboot.flowrun import new_flows
from cellboot.flowrun import records
from cellboot import metrics
from cellboot.metrics import sources as metrics_sources
from cellboot import notifications

LOG = logging.getLogger(__name__)

# Failures that end a flow the expected way (logged as one line).
_EXPECTED_FAILURES = (exception.NoValidHost, exception.BuildRefused)

# What ``Runner.run_saved`` did with a flow.
RAN = flow_conductor.RAN
ALREADY_RUNNING = flow_conductor.ALREADY_RUNNING
FENCED = flow_conductor.FENCED


def _log_outcome(what, exc):
    if isinstance(exc, _EXPECTED_FAILURES):
        LOG.info('%s ended: %s', what, exc)
    elif isinstance(exc, kinds.CorruptFlow):
        LOG.warning('%s refused: %s', what, exc)
    elif isinstance(exc, exception.CellbootException):
        LOG.warning('%s failed: %s', what, exc)
    else:
        LOG.exception('%s failed unexpectedly', what)


class Runner:
    """Starts, runs and hands over the flows of one kind.

    ``kind`` is the kind of flow it creates and posts; ``level``
    (``kinds.SUPER`` or ``kinds.CELL``) which flows it runs: those of
    its level's kinds, from its own database; any other (corrupt) flow
    it is handed is refused with a WARNING. ``persistence()`` returns
    the database URL flows are persisted in (None: they are not);
    ``transient_for(context)`` the values a flow needs that are never
    persisted. ``board_cell``: the cell whose board it uses (None: the
    boot board).

    ``board`` is the connected jobboard of its kind once ``open`` ran
    with ``[jobboard] backend = redis``, else None. ``flow_listeners``:
    callables ``engine -> taskflow Listener`` attached to every run
    besides the logging and timing ones, a hook for tests that act
    between two atoms.
    """

    def __init__(self, kind, level, persistence, transient_for,
                 board_cell=None):
        self.kind = kind
        self.level = level
        self.persistence = persistence
        self.transient_for = transient_for
        self.board_cell = board_cell
        self.board = None
        self.flow_listeners = ()
        self._flow_conductor = None
        # Flows this process runs now, and the threads resuming the
        # flows handed over.
        self._running = set()
        self._running_lock = threading.Lock()
        self._resumers = []
        self._owner = None
        metrics_sources.register(self)

    def samples(self):
        """The flows in hand, as a metric (``cellboot.metrics.sources``)."""
        with self._running_lock:
            running = len(self._running)
        yield 'cellboot_flows_running', {'kind': self.kind}, running

    @property
    def owner(self):
        """This conductor's name, as flows and claims record it.

        ``HOST:PID`` (``records.owner_name``); in-process tests running
        several conductors give each a name of its own (before
        ``open``).
        """
        return self._owner or records.owner_name()

    @owner.setter
    def owner(self, name):
        self._owner = name

    # -- opening and closing -------------------------------------------------

    def _uses_jobboard(self):
        if CONF.jobboard.backend != jobboard_conf.REDIS:
            return False
        if self.persistence() is None:
            LOG.warning('[jobboard] backend = redis needs persisted flows '
                        '([conductor] persist_flows): running the %s flows '
                        'without the jobboard', self.kind)
            return False
        return True

    def open(self):
        """Start claiming jobs, or resume unfinished flows; how many."""
        if self._uses_jobboard():
            self.board = jobboard.connect(self.kind, self.persistence(),
                                          cell_name=self.board_cell)
            self._flow_conductor = flow_conductor.start_conductor(
                self, self.board)
            LOG.info('Conductor %s takes %s jobs from board %s', self.owner,
                     self.kind, self.board.name)
            return 0
        return self.resume_unfinished()

    def close(self):
        """Stop claiming; let the flows under way finish."""
        if self._flow_conductor is not None:
            self._flow_conductor.stop()
            self._flow_conductor.wait()
            self._flow_conductor = None
        if self.board is not None:
            self.board.close()
            self.board = None
        while self._resumers:
            self._resumers.pop().join()

    # -- start ---------------------------------------------------------------

    def start(self, context, store, instance_uuids, key, what):
        """Run, or post, the flow of one request; never raises.

        ``key`` identifies the request (``records.flow_uuid``): a flow
        that exists already is neither run nor posted again. Returns the
        engine of a flow run here to its end, else None.
        """
        # What is persisted must be JSON (PostgreSQL's JSON columns take
        # no datetime): as it would have arrived over RPC.
        store = jsonutils.to_primitive(store)
        persistence = self.persistence()
        try:
            if persistence is None:
                return flow_engine.run_in_memory(
                    self.kind, store, self.transient_for(context),
                    label=what, extra_listeners=self.flow_listeners)
            # Posted, not held: whichever conductor claims it takes it
            # over (``records.take_over``).
            posted = self.board is not None
            # A database outage is waited out, as the flow's steps do.
            flow_detail, created = new_flows.save(
                self.kind, store, persistence, key, context,
                instance_uuids, self.owner, posted, what)
        except Exception as exc:
            _log_outcome(what, exc)
            return None
        if not created:
            LOG.info('%s: flow %s exists already (state %s, owner %s): '
                     'neither run nor posted again', what,
                     flow_detail.uuid, flow_detail.state,
                     records.owner_of(flow_detail.meta))
            return None
        if posted:
            self._post(what, flow_detail.uuid,
                       f'{self.kind} {context.request_id}')
            return None
        with self._running_lock:
            if flow_detail.uuid in self._running:
                return None
            self._running.add(flow_detail.uuid)
        return self._run_counted(what, flow_detail, context=context,
                                 created=True)

    def _post(self, what, flow_uuid, book_name=None):
        try:
            job = jobboard.post(self.board, self.kind, flow_uuid,
                                book_name)
            if job is not None and self._flow_conductor is not None:
                self._flow_conductor.wake(job)   # claimed here at once
        except Exception as exc:
            # The flow is saved: the sweeper posts it again later.
            LOG.error('%s: could not post flow %s on board %s: %s',
                      what, flow_uuid, self.board.name, exc)

    # -- run a saved flow ----------------------------------------------------

    def run_saved(self, flow_detail, extra_listeners=()):
        """Run a saved flow to its end (first run or resumption).

        Never raises; the outcome is ``flow_detail.state``. Returns
        ``RAN``; ``ALREADY_RUNNING``, without running it, when this
        process runs that flow already (one engine per flow); ``FENCED``
        when another run took the flow over while this one ran (it
        stopped, and ``flow_detail`` in memory may say more than was
        recorded). ``extra_listeners`` are attached besides
        ``flow_listeners``.
        """
        with self._running_lock:
            if flow_detail.uuid in self._running:
                return ALREADY_RUNNING
            self._running.add(flow_detail.uuid)
        fenced = []
        self._run_counted(f'{self.kind.capitalize()} flow '
                          f'{flow_detail.uuid}', flow_detail,
                          extra_listeners=extra_listeners, fenced=fenced)
        return FENCED if fenced else RAN

    def _run_counted(self, what, flow_detail, extra_listeners=(),
                     context=None, created=False, fenced=None):
        """Run a saved flow this process counts as running; the engine.

        The flow is its kind's (``kinds.build``): one that is corrupt,
        or not of this level, is refused before anything of it is
        written or run. Then this conductor takes it over
        (``records.take_over``), which gives the run its fencing token
        (and reads the flow again if another run may have written it
        meanwhile); a resumption gets ``resumed=True`` among its
        transient values, and every run gets its ``fence``. ``context``:
        the request context (default: the flow's stored one);
        ``created``: ``start`` saved it just now. A run fenced out is
        logged (one WARNING) and appended to ``fenced`` (a list) if
        given. Never raises; forgets the flow from ``_running`` once it
        ran.
        """
        with self._running_lock:
            self._running.add(flow_detail.uuid)
        persistence = self.persistence()
        try:
            flow = kinds.build(flow_detail, self.level)
            stored = records.stored_context(flow_detail.meta or {})
            previous_state = flow_detail.state
            previous_owner = records.owner_of(flow_detail.meta)
            taken = records.take_over(
                persistence, flow_detail, owner=self.owner, created=created)
            resumed = taken.resumed
            if taken.reread:
                # What the previous run wrote before this one fenced it
                # out: its last step is not run again here.
                flow_detail.update(records.load_detail(persistence,
                                                       flow_detail.uuid))
                if flow_detail.state in flow_states.FINISHED_STATES:
                    LOG.info('%s: ended %s by %s before %s took it over; '
                             'nothing left to run', what, flow_detail.state,
                             previous_owner, self.owner)
                    return None
            if resumed:
                metrics.FLOWS_RESUMED.labels(kind=self.kind).inc()
                LOG.info('Resuming flow %s (%s) of request %s, left %s by '
                         '%s.', flow_detail.name, flow_detail.uuid,
                         stored.request_id, previous_state or 'PENDING',
                         previous_owner)
                notifications.flow_event(stored, flow_detail, 'resumed')
            backend = flow_db.get_backend(persistence)
            engine = flow_engine.CellbootEngine(flow, flow_detail, backend,
                                                {})
            fence = fencing.Fence(flow_detail.uuid, taken.token,
                                  backend.engine, taken=True)
            engine.storage.fence_with(fence)
            transient = dict(self.transient_for(context or stored),
                             fence=fence)
            if resumed:
                transient['resumed'] = True
            return flow_engine.run_engine(
                engine, transient, f'{flow_detail.name} {flow_detail.uuid}'
                if context is None else what,
                tuple(self.flow_listeners) + tuple(extra_listeners),
                persistence)
        except fencing.FencedOut as exc:
            LOG.warning('%s (conductor %s) stopped: %s', what, self.owner,
                        exc)
            if fenced is not None:
                fenced.append(exc)
            return None
        except Exception as exc:
            _log_outcome(what, exc)
            return None
        finally:
            with self._running_lock:
                self._running.discard(flow_detail.uuid)

    def _load_and_run(self, flow_uuid, counted=False):
        """Load flow ``flow_uuid`` and run it (``run_saved``).

        ``counted``: the caller has put it in ``_running`` already (a
        flow handed over).
        """
        try:
            flow_detail = records.load_detail(self.persistence(), flow_uuid)
        except Exception as exc:
            _log_outcome(f'Loading {self.kind} flow {flow_uuid}', exc)
            if counted:
                with self._running_lock:
                    self._running.discard(flow_uuid)
            return
        if counted:
            self._run_counted(f'{self.kind.capitalize()} flow {flow_uuid}',
                              flow_detail)
        else:
            self.run_saved(flow_detail)

    def resume_unfinished(self):
        """Finish the flows this host's conductor left; how many there were.

        Each resumed flow ends SUCCESS or REVERTED, like any other run;
        one that fails again is logged and the others still run.
        """
        persistence = self.persistence()
        if persistence is None or not CONF.conductor.resume_flows:
            return 0
        flows = records.unfinished(persistence, self.kind, self.level,
                                   conductor=CONF.host)
        for flow in flows:
            self._load_and_run(flow['uuid'])
        return len(flows)

    # -- hand over -----------------------------------------------------------

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
            posted = jobboard.post(self.board, self.kind,
                                   flow_uuid) is not None
            if posted:
                metrics.FLOWS_HANDED_OVER.labels(kind=self.kind).inc()
                notifications.flow_event(None, flow_uuid, 'handed_over')
            return posted
        with self._running_lock:
            if flow_uuid in self._running:
                return False
            # Counted as running from now: a second hand_over before the
            # thread starts must not resume it twice.
            self._running.add(flow_uuid)
        thread = threading.Thread(target=self._load_and_run,
                                  args=(flow_uuid, True), daemon=True,
                                  name=f'resume {flow_uuid}')
        self._resumers = [t for t in self._resumers if t.is_alive()]
        self._resumers.append(thread)
        thread.start()
        metrics.FLOWS_HANDED_OVER.labels(kind=self.kind).inc()
        notifications.flow_event(None, flow_uuid, 'handed_over')
        return True
