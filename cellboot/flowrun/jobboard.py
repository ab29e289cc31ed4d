"""The jobboards: several conductor processes sharing their flows.

With ``[jobboard] backend = redis``, the conductor that receives a cast
saves the request's flow (``records.create``) and posts a job naming
it on its kind's board (``post``): ``NAMESPACE.boot`` for the super
conductors' boot flows, ``NAMESPACE.cell.CELL.reschedule`` for the
reschedule flows of cell CELL, whose keys are all under a prefix of the
cell's own (``board_keys``). Every conductor process runs a
``FlowConductor`` (TaskFlow's non-blocking conductor,
``cellboot.flowrun.conductor``) in a thread: it
claims jobs, runs their flows from their persisted atoms and consumes
the jobs whose flows ended.

Why claims expire: TaskFlow's conductor claims for ever, so the jobs of
a conductor that was killed would stay claimed by nobody alive. Here a
claim lasts ``[jobboard] claim_expiry`` seconds (``ExpiringRedisJobBoard``)
and a running conductor renews the claims of the flows it runs every
third of that (``claims.ClaimRenewer``); once a dead conductor's claims expire,
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
  started late on a loaded machine): the claim is checked as soon as
  the job is dispatched, before the flow is loaded or taken over; one
  already lost runs nothing here (``FlowConductor``).
* A claim that ran out while its owner still ran the flow (a process
  starved of CPU, a long pause) and went to another conductor: it is
  checked as each atom ends, right before the next one starts, and
  renewed by the ``ClaimRenewer`` every third of the expiry. A check
  within half the expiry of the last grant needs no Redis call (the
  claim cannot have run out; ``claims.Claim.check``); found
  in other hands (or the job gone), the engine is suspended, so no
  further step starts here, and the job is never consumed by the loser
  (WARNING). The step under way when the claim ran out may still run in
  both; every step is idempotent.

The board's persistence is the flows' (``cellboot.flowrun.backend``); jobs
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

import uuid

from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils
import redis
from taskflow import exceptions as tf_exc
from taskflow.jobs.backends import impl_redis
from taskflow.jobs import base as jobs_base
from taskflow.persistence import models

from cellboot.conf import CONF
from cellboot.flowrun import backend as flow_db
from cellboot import exception
from cellboot.flowrun import board_keys
from cellboot.flowrun import listings

LOG = logging.getLogger(__name__)

# The keys of the details of every job cellboot posts.
_JOB_DETAILS = frozenset({'flow_uuid', 'kind'})

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
        self.listings = listings.Listings(self)

    def _fetch_jobs(self):
        """The listed jobs, oldest first, postings decoded once.

        (``listings.Listings``; TaskFlow's decodes every posting at
        every call, newest first.)
        """
        return self.listings.jobs()

    def claim(self, job, who, expiry=None):
        """Claim ``job`` for ``who``, for ``expiry`` seconds.

        A job ``who`` holds already is refused (``UnclaimableJob``) and
        its claim left as it is. TaskFlow's claim of a job its caller
        holds extends the claim, and a conductor tries to claim every
        job of the board at each turn of its loop: a job it left to its
        claim's expiry (its flow could not be loaded or did not end)
        would be extended for ever by the conductor that left it, and
        never run again while that conductor lives — with one conductor
        per cell, never. Only the renewer extends a claim
        (``renew_claim``), and only while the flow runs.
        """
        if expiry is None:
            expiry = self.claim_expiry
        if self.holder(job) == who:
            raise tf_exc.UnclaimableJob(
                f'Job {job.uuid} is claimed by {who} already: left to run '
                f'out')
        return super().claim(job, who, expiry=expiry)

    def claim_free(self, job, who):
        """Claim ``job``, which ``listings.unclaimed`` found free just now.

        Without ``claim``'s look at the holder first (a round trip):
        only the conductor's loop claims, one job at a time, so a job
        free when its turn began cannot have become ``who``'s since;
        held by anyone else, TaskFlow's claim refuses it.
        """
        return super().claim(job, who, expiry=self.claim_expiry)

    def post_once(self, job_uuid, name, book=None, details=None):
        """Post job ``job_uuid`` unless the board has it; the job or None.

        TaskFlow's ``post`` makes a random uuid for every job; this one
        takes the uuid, and the listing's HSETNX is the check, so that
        two posters racing make one job. The job takes its place in the
        board's order (``listings``) in the same round trip: a job
        there already keeps its place (NX), and a poster that dies
        between the two leaves a job that is ordered at the next full
        read of the listing.
        """
        posting = jobs_base.format_posting(
            job_uuid, name, created_on=timeutils.utcnow(), book=book,
            details=details)
        key = job_uuid.encode('latin-1')
        with impl_redis._translate_failures():
            posting['sequence'] = self._client.incr(self.sequence_key)
            pipe = self._client.pipeline(transaction=False)
            pipe.hsetnx(self.listings_key, key, self._dumps(posting))
            pipe.zadd(self.listings.order_key, {key: posting['sequence']},
                      nx=True)
            posted, _ordered = pipe.execute()
            if not posted:
                return None
        return impl_redis.RedisJob(
            self, name, posting['sequence'], key, uuid=job_uuid,
            details=details, created_on=posting['created_on'], book=book,
            book_data=posting.get('book'), backend=self._persistence)

    def holder(self, job):
        """Who holds ``job``'s claim; None when nobody does.

        (TaskFlow's ``find_owner`` fails on a job nobody holds.)
        """
        with impl_redis._translate_failures():
            raw_owner = self._client.get(job.owner_key)
        return self._decode_owner(raw_owner) if raw_owner else None

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
