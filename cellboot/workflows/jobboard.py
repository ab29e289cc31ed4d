"""The jobboards: several conductor processes sharing their flows.

With ``[jobboard] backend = redis``, the conductor that receives a cast
saves the request's flow (``engine.create``) and posts a job naming it
on its kind's board (``post``): ``NAMESPACE.boot`` for the super
conductors' boot flows, ``NAMESPACE.cell.CELL.reschedule`` for the
reschedule flows of cell CELL, whose keys are all under a prefix of the
cell's own (``board_keys``). Every conductor process runs a
``FlowConductor`` (TaskFlow's non-blocking conductor) in a thread: it
claims jobs, runs their flows from their persisted atoms and consumes
the jobs whose flows ended.

Why claims expire: TaskFlow's conductor claims for ever, so the jobs of
a conductor that was killed would stay claimed by nobody alive. Here a
claim lasts ``[jobboard] claim_expiry`` seconds (``ExpiringRedisJobBoard``)
and a running conductor renews the claims of the flows it runs every
third of that (``ClaimRenewer``); once a dead conductor's claims expire,
a survivor claims its jobs and resumes the flows (the engine skips the
atoms that had completed).

A job whose flow did not end (its database was unreachable, say) is
neither consumed nor abandoned: its claim runs out, and the job is tried
again then, by whichever conductor claims it first.

One flow, one engine at a time:

* A board holds at most one job per flow: a flow's job has a uuid
  derived from the flow's (``job_uuid``) and is posted only if the board
  has no job of that uuid (``post``: Redis's HSETNX decides), so two
  sweepers handing the same flow over, or a sweeper racing a cast, post
  one job. There is thus never a second job to claim for a flow whose
  job is claimed.
* A process never runs a flow it already runs (its own claim expired
  and its conductor thread claimed the job again): the second dispatch
  is refused, and the job left to its claim's expiry.
* A claim that ran out before its flow started here (the pool thread
  started late on a loaded machine): the claim is renewed, and checked,
  as soon as the job is dispatched, before the flow is loaded or taken
  over; one already lost runs nothing here (``FlowConductor``).
* A claim that ran out while its owner still ran the flow (a process
  starved of CPU, a long pause) and went to another conductor: it is
  checked (and renewed) as each atom ends, right before the next one
  starts, and by the ``ClaimRenewer`` every third of the expiry; found
  in other hands (or the job gone), the engine is suspended, so no
  further step starts here, and the job is never consumed by the loser
  (WARNING). The step under way when the claim ran out may still run in
  both; every step is idempotent.

The board's persistence is the flows' (``cellboot.db.flow_db``); jobs
carry only the logbook's name and uuid and ``{'flow_uuid', 'kind'}``.

What a job says is data from a place that others can write (without
ACLs, every cell's conductors reach the whole Redis server): only its
flow's uuid is read, and only from details of exactly that shape and of
the board's kind (``job_flow_uuid``). The flow is then loaded from the
conductor's own database and rebuilt from its kind's factory
(``kinds``); TaskFlow's own job fields (a ``store``, a factory) are
never used. A job that says anything else, or names a corrupt flow, is
trashed (kept in the board's trash for the operator) with a WARNING,
and nothing of it runs.
"""

import contextlib
import threading
import uuid

from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils
import redis
from taskflow.conductors.backends import impl_nonblocking
from taskflow import exceptions as tf_exc
from taskflow.jobs.backends import impl_redis
from taskflow.jobs import base as jobs_base
from taskflow.listeners import base as listener_base
from taskflow.persistence import models
from taskflow import states

from cellboot.conf import CONF
from cellboot.db import flow_db
from cellboot import exception
from cellboot.workflows import board_keys
from cellboot.workflows import engine
from cellboot.workflows import kinds

LOG = logging.getLogger(__name__)

KIND_BOOT = board_keys.KIND_BOOT
KIND_RESCHEDULE = board_keys.KIND_RESCHEDULE

# The keys of the details of every job cellboot posts.
_JOB_DETAILS = frozenset({'flow_uuid', 'kind'})

# What becomes of a job once its flow was dispatched.
CONSUME = 'consume'
LEAVE = 'leave'
TRASH = 'trash'

# Seconds a call to Redis may take before it counts as failed.
REDIS_TIMEOUT = 5.0


class JobboardUnavailable(exception.CellbootException):
    msg_fmt = 'Cannot use the jobboard at %(where)s: %(reason)s'


def board_name(kind, cell_name=None):
    """The board of ``kind`` (and of cell ``cell_name`` for reschedules)."""
    return board_keys.board_name(kind, cell_name)


def _redis_conf(url):
    """The Redis board's client settings for a ``redis://`` URL."""
    try:
        parsed = redis.connection.parse_url(url)
    except ValueError as exc:
        raise exception.ConfigurationError(
            reason=f'[jobboard] url: {exc}')
    conf = {'socket_timeout': REDIS_TIMEOUT,
            'socket_connect_timeout': REDIS_TIMEOUT}
    for key in ('host', 'port', 'db', 'username', 'password'):
        if parsed.get(key) is not None:
            conf[key] = parsed[key]
    if parsed.get('path'):
        conf['unix_socket_path'] = parsed['path']
    if parsed.get('connection_class') is redis.SSLConnection:
        conf['ssl'] = True
    return conf


def _where(conf):
    """Where a board is, for operators (never its password)."""
    if conf.get('unix_socket_path'):
        return conf['unix_socket_path']
    return (f'redis://{conf.get("host", "localhost")}:'
            f'{conf.get("port", 6379)}/{conf.get("db", 0)}')


# KEYS[1]: a job's owner key; ARGV: the expected owner, the expiry (ms).
# Returns {1 if extended else 0, the owner found or ''}.
_RENEW_IF_OWNER = """
local owner = redis.call('get', KEYS[1])
if not owner then
    return {0, ''}
end
if owner == ARGV[1] then
    redis.call('pexpire', KEYS[1], ARGV[2])
    return {1, owner}
end
return {0, owner}
"""


class ExpiringRedisJobBoard(impl_redis.RedisJobBoard):
    """TaskFlow's Redis board whose claims expire unless renewed.

    ``kind``: the kind of flow whose jobs it holds.
    """

    def __init__(self, name, conf, claim_expiry, persistence=None,
                 kind=None):
        super().__init__(name, conf, persistence=persistence)
        self.claim_expiry = claim_expiry
        self.kind = kind
        self._renew_script = None

    def claim(self, job, who, expiry=None):
        if expiry is None:
            expiry = self.claim_expiry
        return super().claim(job, who, expiry=expiry)

    def post_once(self, job_uuid, name, book=None, details=None):
        """Post job ``job_uuid`` unless the board has it; the job or None.

        TaskFlow's ``post`` makes a random uuid for every job; this one
        takes the uuid, and the listing's HSETNX is the check, so that
        two posters racing make one job.
        """
        posting = jobs_base.format_posting(
            job_uuid, name, created_on=timeutils.utcnow(), book=book,
            details=details)
        key = job_uuid.encode('latin-1')
        with impl_redis._translate_failures():
            posting['sequence'] = self._client.incr(self.sequence_key)
            if not self._client.hsetnx(self.listings_key, key,
                                       self._dumps(posting)):
                return None
        return impl_redis.RedisJob(
            self, name, posting['sequence'], key, uuid=job_uuid,
            details=details, created_on=posting['created_on'], book=book,
            book_data=posting.get('book'), backend=self._persistence)

    def renew_claim(self, job, who, expiry=None):
        """Extend ``who``'s claim on ``job``; ``(renewed, owner)``.

        One Redis round trip, atomic (a Lua script): the claim is
        extended only if ``who`` holds it, so a claim that ran out and
        went to another conductor between a read and the extension is
        never extended for the wrong owner. ``owner`` is the holder
        found (None: nobody; the claim ran out or the job is gone).
        """
        if self._renew_script is None:
            self._renew_script = self._client.register_script(
                _RENEW_IF_OWNER)
        ms_expiry = int((expiry or self.claim_expiry) * 1000.0)
        with impl_redis._translate_failures():
            renewed, raw_owner = self._renew_script(
                keys=[job.owner_key],
                args=[self._encode_owner(who), ms_expiry])
        owner = self._decode_owner(raw_owner) if raw_owner else None
        return bool(renewed), owner


def connect(kind, persistence, cell_name=None):
    """The connected board of ``kind``, jobs loading from ``persistence``.

    Raises JobboardUnavailable (one line for the operator) when Redis
    does not answer.
    """
    conf = _redis_conf(CONF.jobboard.url)
    name = board_name(kind, cell_name)
    conf['namespace'] = name
    board = ExpiringRedisJobBoard(name, conf, CONF.jobboard.claim_expiry,
                                  persistence=flow_db.get_backend(persistence),
                                  kind=kind)
    try:
        board.connect()
    except tf_exc.TaskFlowException as exc:
        # TaskFlow's message repeats its cause's: the cause says it all.
        raise JobboardUnavailable(where=_where(conf),
                                  reason=exc.cause or exc)
    return board


def job_uuid(flow_uuid):
    """The uuid of flow ``flow_uuid``'s job (one job per flow: module doc)."""
    return str(uuid.uuid5(uuid.UUID(flow_uuid), 'job'))


def post(board, kind, flow_uuid, book_name=None):
    """Post the job of flow ``flow_uuid`` (its logbook has its uuid).

    Returns the job, or None when the board has it already (claimed or
    not): posting is idempotent, even between racing conductors.
    """
    book = models.LogBook(book_name or f'{kind} {flow_uuid}', uuid=flow_uuid)
    job = board.post_once(job_uuid(flow_uuid), f'{kind} {flow_uuid}',
                          book=book,
                          details={'flow_uuid': flow_uuid, 'kind': kind})
    if job is None:
        LOG.debug('The job of %s flow %s is on %s already', kind,
                  flow_uuid, board.name)
    else:
        LOG.debug('Posted job %s for %s flow %s on %s', job.uuid, kind,
                  flow_uuid, board.name)
    return job


def job_flow_uuid(job, kind):
    """The uuid of the flow job ``job`` of a ``kind`` board names.

    None unless its details are what ``post`` writes: exactly
    ``{'flow_uuid': UUID, 'kind': kind}`` (see the module doc).
    """
    details = job.details
    if not isinstance(details, dict) or set(details) != _JOB_DETAILS:
        return None
    flow_uuid = details['flow_uuid']
    if details['kind'] != kind or not isinstance(flow_uuid, str) or \
            not uuidutils.is_uuid_like(flow_uuid):
        return None
    return flow_uuid


def referenced_flow_uuids(board):
    """The flow uuids of every job on ``board``, claimed or not.

    Only jobs that ``job_flow_uuid`` reads count: any other is trashed
    by the conductor that claims it, and refers to no flow.
    """
    return {job_flow_uuid(job, board.kind)
            for job in board.iterjobs()} - {None}


class Claim:
    """A claim being renewed: is it lost, and the engine to stop if so."""

    def __init__(self, job, renewer):
        self.job = job
        self.lost_to = None
        self._renewer = renewer
        self._lost = threading.Event()
        self._engines = set()
        self._lock = threading.Lock()

    @property
    def lost(self):
        return self._lost.is_set()

    def lose(self, owner):
        """The claim went to ``owner`` (None: nobody): suspend the run.

        In a thread of its own: ``suspend`` waits for the engine's
        storage, which a step in progress may hold, and the renewer must
        go on renewing the other claims meanwhile.
        """
        with self._lock:
            self.lost_to = owner
            self._lost.set()
            engines = list(self._engines)
        for engine_ in engines:
            threading.Thread(target=engine_.suspend, daemon=True,
                             name=f'suspend {self.job.uuid}').start()

    def check(self):
        """Renew the claim now; whether it is still ours (see ``renew``).

        One Redis round trip. False when it is lost (then marked so) and
        when Redis did not answer.
        """
        return not self.lost and self._renewer.renew(self)

    def watch(self, engine_):
        """A listener for ``engine_``'s run: suspended once it is lost."""
        return _SuspendOnLoss(engine_, self)

    def _attach(self, engine_):
        with self._lock:
            self._engines.add(engine_)

    def _detach(self, engine_):
        with self._lock:
            self._engines.discard(engine_)


class _SuspendOnLoss(listener_base.Listener):
    """Registers an engine with its claim while it runs, and checks it.

    The claim is checked (and renewed: ``Claim.check``) as the flow
    starts and whenever an atom ends, that is right before the engine
    picks the next atom to run: a claim found lost suspends the engine
    there, in its own thread, so that the next atom never starts here.
    The renewer alone would find the loss up to a third of the expiry
    later, while this run went on beside the new holder's. Cost: one
    Redis round trip per atom. A lost claim seen by the renewer
    suspends the engine too (``Claim.lose``); a ``suspend`` before the
    run would be ignored, hence the check as it starts.
    """

    _ATOM_ENDS = (states.SUCCESS, states.FAILURE, states.REVERTED,
                  states.REVERT_FAILURE)

    def __init__(self, engine_, claim):
        super().__init__(engine_, task_listen_for=self._ATOM_ENDS,
                         flow_listen_for=[states.RUNNING],
                         retry_listen_for=self._ATOM_ENDS)
        self._claim = claim

    def register(self):
        super().register()
        self._claim._attach(self._engine)

    def deregister(self):
        self._claim._detach(self._engine)
        super().deregister()

    def _check(self):
        self._claim.check()
        if self._claim.lost:
            self._engine.suspend()

    def _flow_receiver(self, state, details):
        self._check()

    def _task_receiver(self, state, details):
        self._check()

    def _retry_receiver(self, state, details):
        self._check()


class ClaimRenewer:
    """Renews the claims of the jobs being run, every expiry/3 seconds.

    One thread for all the jobs of a conductor. A claim found in another
    conductor's hands, or whose job is gone (this one stalled beyond the
    expiry), is lost: its ``Claim`` suspends the engine running the flow
    (see the module doc). A claim that merely ran out (nobody has it)
    is lost too: the job is free, and whoever claims it next resumes the
    flow; this run stops rather than race it. A failure to reach Redis
    is not a loss: the claim is renewed at the next turn, if still ours.
    """

    def __init__(self, board, who):
        self._board = board
        self._who = who
        self._expiry = board.claim_expiry
        self._claims = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = None

    @contextlib.contextmanager
    def renewing(self, job):
        """Keep ``job``'s claim alive while the block runs; yield a Claim."""
        claim = Claim(job, self)
        with self._lock:
            self._claims.add(claim)
            if self._thread is None:
                self._stopping.clear()
                self._thread = threading.Thread(
                    target=self._run, name=f'claim renewer {self._who}',
                    daemon=True)
                self._thread.start()
        try:
            yield claim
        finally:
            with self._lock:
                self._claims.discard(claim)

    def _run(self):
        while not self._stopping.wait(self._expiry / 3.0):
            with self._lock:
                claims = [claim for claim in self._claims
                          if not claim.lost]
            for claim in claims:
                self.renew(claim)

    def renew(self, claim):
        """Extend the claim if it is still this conductor's; whether it is.

        One atomic Redis call (``ExpiringRedisJobBoard.renew_claim``). A
        claim found lost is marked so (``Claim.lose``), once. A failure
        to reach Redis returns False without losing the claim.
        """
        job = claim.job
        try:
            renewed, owner = self._board.renew_claim(job, self._who,
                                                     self._expiry)
        except tf_exc.TaskFlowException as exc:
            LOG.warning('Could not renew the claim on job %s: %s', job.uuid,
                        exc)
            return False
        if renewed:
            return True
        with self._lock:
            if claim.lost:
                return False
            LOG.warning('The claim of %s on job %s (flow %s) is lost (%s): '
                        'the flow is suspended here after its current step '
                        'and the job left to whoever claims it', self._who,
                        job.uuid, (job.details or {}).get('flow_uuid'),
                        f'now held by {owner}' if owner
                        else 'it ran out, or its job is gone')
            claim.lose(owner)
        return False

    def stop(self):
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()


class FlowConductor(impl_nonblocking.NonBlockingConductor):
    """TaskFlow's conductor running a conductor manager's flows.

    ``manager`` provides ``KIND`` and ``LEVEL`` (its board's kind; the
    level of the flows it runs, see ``kinds``), ``persistence()``,
    ``owner`` (the claims' owner name) and
    ``run_persisted(flow_detail, extra_listeners)``,
    which runs a saved flow (first run or resumption, with the manager's
    transient values and listeners), never raises, and returns False
    without running it when this process runs that flow already.

    Stopping (``stop``) stops claiming; the flows being run finish, and
    ``wait`` returns once they have (they are not suspended, so a
    conductor that is stopped hands no half-run flow to another).
    """

    def __init__(self, manager, board):
        super().__init__(
            manager.owner, board,
            persistence=flow_db.get_backend(manager.persistence()),
            max_simultaneous_jobs=CONF.jobboard.max_simultaneous_jobs)
        self._manager = manager
        self.renewer = ClaimRenewer(board, manager.owner)

    def _dispatch_job(self, job):
        """Run the job's flow; what becomes of the job (see module)."""
        with self.renewer.renewing(job) as claim:
            # First of all: the claim was taken some time ago (a thread
            # of the pool, a busy machine), it is renewed only at the
            # renewer's next tick, and loading the flow takes a
            # database read. A claim that ran out meanwhile may be
            # another conductor's already: then nothing runs here.
            if not claim.check():
                LOG.warning('Job %s: the claim of %s was %s before its '
                            'flow started here; not run', job.uuid,
                            self._manager.owner,
                            'lost' if claim.lost else 'not renewed')
                return LEAVE
            return self._run_claimed(job, claim)

    def _refuse(self, job, why):
        LOG.warning('Job %s on board %s %s: nothing of it is run, and the '
                    'job is moved to the board\'s trash', job.uuid,
                    self._jobboard.name, why)
        return TRASH

    def _load(self, job, flow_uuid):
        """``(flow_detail, None)``, or ``(None, what becomes of the job)``."""
        try:
            flow_detail = flow_db.get_connection(
                self._manager.persistence()).get_flow_details(flow_uuid)
        except tf_exc.NotFound:
            LOG.warning('Job %s names flow %s, which does not exist: '
                        'dropping the job', job.uuid, flow_uuid)
            return None, CONSUME
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            # Rows that TaskFlow cannot decode stay so: not a retry.
            return None, self._refuse(
                job, f'names flow {flow_uuid}, which cannot be read '
                     f'({type(exc).__name__}: {exc})')
        except Exception as exc:
            LOG.warning('Cannot load flow %s of job %s: %s; the job is '
                        'tried again when its claim expires', flow_uuid,
                        job.uuid, exc)
            return None, LEAVE
        return flow_detail, None

    def _run_claimed(self, job, claim):
        flow_uuid = job_flow_uuid(job, self._manager.KIND)
        if flow_uuid is None:
            return self._refuse(job, f'is not a job cellboot posts (its '
                                     f'details: {job.details!r:.200})')
        flow_detail, verdict = self._load(job, flow_uuid)
        if flow_detail is None:
            return verdict
        try:
            kinds.kind_of(flow_uuid, flow_detail.meta, self._manager.LEVEL)
        except kinds.CorruptFlow as exc:
            return self._refuse(job, f'names a corrupt flow: {exc}')
        if flow_detail.state in engine.FINISHED_STATES:
            LOG.info('Flow %s of job %s has already ended (%s)', flow_uuid,
                     job.uuid, flow_detail.state)
            return CONSUME
        ran = self._manager.run_persisted(
            flow_detail, extra_listeners=[claim.watch])
        if not ran:
            LOG.info('Flow %s of job %s is being run by this conductor '
                     'already: not run twice; the job is left to its '
                     'claim', flow_uuid, job.uuid)
            return LEAVE
        if claim.lost:
            LOG.warning('Flow %s of job %s was stopped (%s) because the '
                        'claim was lost; the job is not consumed here',
                        flow_uuid, job.uuid, flow_detail.state)
            return LEAVE
        if flow_detail.state in engine.FINISHED_STATES:
            return CONSUME
        LOG.warning('Flow %s of job %s did not end (%s); it is tried again '
                    'when the claim expires', flow_uuid, job.uuid,
                    flow_detail.state)
        return LEAVE

    def _on_job_done(self, job, fut):
        try:
            verdict = fut.result()
        except BaseException:
            # Even a BaseException: this is a worker thread's callback,
            # where nothing above would handle it.
            LOG.exception('Job %s failed unexpectedly; it is tried again '
                          'when its claim expires', job.uuid)
            verdict = LEAVE
        try:
            if verdict == CONSUME:
                self._try_finish_job(job, True)
            elif verdict == TRASH:
                self._try_finish_job(job, False, trash=True)
            # Left: neither abandoned (another conductor would retry at
            # once, in a loop if the cause lasts) nor trashed; the claim
            # runs out.
        finally:
            self._dispatched.discard(fut)

    def wait(self, timeout=None):
        done = super().wait(timeout)
        if done:
            self.renewer.stop()
        return done


def start_conductor(manager, board):
    """Run a FlowConductor for ``manager`` in a daemon thread; return it."""
    conductor = FlowConductor(manager, board)
    thread = threading.Thread(target=conductor.run,
                              name=f'jobboard conductor {board.name}',
                              daemon=True)
    thread.start()
    conductor.thread = thread
    return conductor
