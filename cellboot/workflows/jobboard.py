"""The jobboards: several conductor processes sharing their flows.

With ``[jobboard] backend = redis``, the conductor that receives a cast
saves the request's flow (``engine.create``) and posts a job naming it
on its kind's board (``post``): ``NAMESPACE.boot`` for the super
conductors' boot flows, ``NAMESPACE.reschedule.CELL`` for the
reschedule flows of cell CELL. Every conductor process runs a
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

The board's persistence is the flows' (``cellboot.db.flow_db``); jobs
carry only the logbook's name and uuid and ``{'flow_uuid', 'kind'}``.
"""

import contextlib
import threading

from oslo_log import log as logging
import redis
from taskflow.conductors.backends import impl_nonblocking
from taskflow import exceptions as tf_exc
from taskflow.jobs.backends import impl_redis
from taskflow.persistence import models

from cellboot.conf import CONF
from cellboot.db import flow_db
from cellboot import exception
from cellboot.workflows import engine

LOG = logging.getLogger(__name__)

KIND_BOOT = 'boot'
KIND_RESCHEDULE = 'reschedule'

# Seconds a call to Redis may take before it counts as failed.
REDIS_TIMEOUT = 5.0


class JobboardUnavailable(exception.CellbootException):
    msg_fmt = 'Cannot use the jobboard at %(where)s: %(reason)s'


def board_name(kind, cell_name=None):
    """The board of ``kind`` (and of cell ``cell_name`` for reschedules)."""
    namespace = CONF.jobboard.namespace
    if kind == KIND_RESCHEDULE:
        return f'{namespace}.{KIND_RESCHEDULE}.{cell_name}'
    return f'{namespace}.{KIND_BOOT}'


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


class ExpiringRedisJobBoard(impl_redis.RedisJobBoard):
    """TaskFlow's Redis board whose claims expire unless renewed."""

    def __init__(self, name, conf, claim_expiry, persistence=None):
        super().__init__(name, conf, persistence=persistence)
        self.claim_expiry = claim_expiry

    def claim(self, job, who, expiry=None):
        if expiry is None:
            expiry = self.claim_expiry
        return super().claim(job, who, expiry=expiry)


def connect(kind, persistence, cell_name=None):
    """The connected board of ``kind``, jobs loading from ``persistence``.

    Raises JobboardUnavailable (one line for the operator) when Redis
    does not answer.
    """
    conf = _redis_conf(CONF.jobboard.url)
    name = board_name(kind, cell_name)
    conf['namespace'] = name
    board = ExpiringRedisJobBoard(name, conf, CONF.jobboard.claim_expiry,
                                  persistence=flow_db.get_backend(persistence))
    try:
        board.connect()
    except tf_exc.TaskFlowException as exc:
        # TaskFlow's message repeats its cause's: the cause says it all.
        raise JobboardUnavailable(where=_where(conf),
                                  reason=exc.cause or exc)
    return board


def post(board, kind, flow_uuid, book_name=None):
    """Post a job for the flow ``flow_uuid`` (its logbook has its uuid)."""
    book = models.LogBook(book_name or f'{kind} {flow_uuid}', uuid=flow_uuid)
    job = board.post(f'{kind} {flow_uuid}', book=book,
                     details={'flow_uuid': flow_uuid, 'kind': kind})
    LOG.debug('Posted job %s for %s flow %s on %s', job.uuid, kind,
              flow_uuid, board.name)
    return job


def referenced_flow_uuids(board):
    """The flow uuids of every job on ``board``, claimed or not."""
    return {(job.details or {}).get('flow_uuid')
            for job in board.iterjobs()} - {None}


class ClaimRenewer:
    """Renews the claims of the jobs being run, every expiry/3 seconds.

    One thread for all the jobs of a conductor. A claim found in another
    conductor's hands (this one stalled beyond the expiry) is logged,
    not renewed: the other conductor now runs the flow too, and the
    idempotent steps make that harmless.
    """

    def __init__(self, board, who):
        self._board = board
        self._who = who
        self._expiry = board.claim_expiry
        self._jobs = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = None

    @contextlib.contextmanager
    def renewing(self, job):
        """Keep ``job``'s claim alive while the block runs."""
        with self._lock:
            self._jobs.add(job)
            if self._thread is None:
                self._stopping.clear()
                self._thread = threading.Thread(
                    target=self._run, name=f'claim renewer {self._who}',
                    daemon=True)
                self._thread.start()
        try:
            yield job
        finally:
            with self._lock:
                self._jobs.discard(job)

    def _run(self):
        while not self._stopping.wait(self._expiry / 3.0):
            with self._lock:
                jobs = list(self._jobs)
            for job in jobs:
                self.renew(job)

    def renew(self, job):
        """Extend ``job``'s claim if it is still this conductor's."""
        try:
            owner = self._board.find_owner(job)
            if owner != self._who:
                LOG.warning('The claim on job %s (flow %s) is now held by '
                            '%s, not renewed by %s', job.uuid,
                            job.details.get('flow_uuid'), owner, self._who)
                return False
            return job.extend_expiry(self._expiry)
        except tf_exc.TaskFlowException as exc:
            LOG.warning('Could not renew the claim on job %s: %s', job.uuid,
                        exc)
            return False

    def stop(self):
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()


class FlowConductor(impl_nonblocking.NonBlockingConductor):
    """TaskFlow's conductor running a conductor manager's flows.

    ``manager`` provides ``persistence()``, ``owner`` (the claims'
    owner name) and ``run_persisted(flow_detail)``, which runs a saved
    flow (first run or resumption, with the manager's transient values
    and listeners) and never raises.

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
        """Run the job's flow; whether to consume the job (see module)."""
        flow_uuid = (job.details or {}).get('flow_uuid')
        try:
            flow_detail = flow_db.get_connection(
                self._manager.persistence()).get_flow_details(flow_uuid)
        except tf_exc.NotFound:
            LOG.warning('Job %s names flow %s, which does not exist: '
                        'dropping the job', job.uuid, flow_uuid)
            return True
        except Exception as exc:
            LOG.warning('Cannot load flow %s of job %s: %s; the job is '
                        'tried again when its claim expires', flow_uuid,
                        job.uuid, exc)
            return False
        if flow_detail.state in engine.FINISHED_STATES:
            LOG.info('Flow %s of job %s has already ended (%s)', flow_uuid,
                     job.uuid, flow_detail.state)
            return True
        with self.renewer.renewing(job):
            self._manager.run_persisted(flow_detail)
        if flow_detail.state in engine.FINISHED_STATES:
            return True
        LOG.warning('Flow %s of job %s did not end (%s); it is tried again '
                    'when the claim expires', flow_uuid, job.uuid,
                    flow_detail.state)
        return False

    def _on_job_done(self, job, fut):
        try:
            consume = fut.result()
        except BaseException:
            # Even a BaseException: this is a worker thread's callback,
            # where nothing above would handle it.
            LOG.exception('Job %s failed unexpectedly; it is tried again '
                          'when its claim expires', job.uuid)
            consume = False
        try:
            if consume:
                self._try_finish_job(job, True)
            # Not consumed: neither abandoned (another conductor would
            # retry at once, in a loop if the cause lasts) nor trashed;
            # the claim runs out.
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
