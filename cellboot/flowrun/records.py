"""What a saved flow's records say: its uuid, its meta, its owner.

A flow runs persisted (``persistence`` is a database URL holding
TaskFlow's tables: the flow database for boot flows, the cell database
for reschedule flows) or in memory only (``persistence=None``, which the
benchmarks use to measure what persistence costs); the runner
(``cellboot.flowrun.runner``) runs it, this module creates and reads
its records and decides who has it.

A persisted flow gets a logbook of its own, named after the request, and
one flow detail whose meta says what it is about::

    {'kind': 'boot', 'instance_uuids': [...], 'conductor': HOST,
     'owner': HOST:PID, 'started_at': ISO 8601, 'request_id': ...,
     'context': {...}}

The kind is all that says which flow it is: a flow is rebuilt from the
factory that ``kinds`` registers for its kind, never from a name stored
with it (rows of earlier versions also carry TaskFlow's ``factory``,
which ``kinds`` reads as their kind and never imports).

A flow's uuid (and its logbook's) is derived from what it is about
(``flow_uuid``): the reservation of a boot request, the instance and
attempt of a reschedule. ``create`` saves a flow only if no flow of that
uuid exists, so that a cast delivered twice, or a cast that arrives
after a sweeper started its flow, never makes a second flow.

Who runs a flow, and when a run is a resumption (``take_over``). The
meta's ``owner`` (``HOST:PID``) is the conductor process that has the
flow, since ``owned_since`` (or ``started_at``). A flow its creator
runs at once (no jobboard) is in its creator's hands from the start; a
flow posted on a jobboard is marked ``posted`` and is in nobody's hands
until a conductor claims it and writes ``owned_since`` (the poster's own
first claim too: one UPDATE). A conductor running a flow:

* runs it as a *resumption* (``resumed=True`` to the atoms) when the
  flow shows it started (its state is past PENDING) **or** when the meta
  names another owner. The second rule is what catches a conductor
  killed during the first atom (``schedule``): the engine defers the
  flow's RUNNING state (``cellboot.flowrun.storage``), so such a flow
  still looks never started, while the scheduler has claimed hosts for it. A
  restarted process on the same host has another pid, hence is another
  owner. The cost: a job first claimed by a conductor other than the one
  that posted it is run as a resumption too, so ``schedule`` releases
  each instance's (absent) allocations before claiming: one release
  call per instance (a small API database transaction each, with the
  scheduler in-process).
* appends to ``resumptions`` (``{'by', 'at', 'from_state'}``, what
  ``flows show`` prints) only when a conductor really took over work:
  the flow had started, or its previous owner had it in hand (the flow
  was not ``posted``, or ``owned_since`` is set) and is another
  process. A job merely claimed
  by another conductor than its poster is not a resumption for an
  operator, and is not recorded. ``from_state`` is the flow's persisted
  state (PENDING for a flow saved but never started).

Every run of a saved flow also takes the flow's next generation, its
fencing token (``fencing``), in the take-over's transaction; the
creator's first run keeps the generation the flow was created with.

``lookup`` finds flows by instance uuid from that meta; the runner's
``run_saved`` rebuilds an unfinished flow from its kind's factory and
finishes it;
a corrupt flow (``kinds.corruption``) is refused before anything of it
is read or written, and ``unfinished`` leaves it out. The
request context is kept (without its token) so that a resumed flow acts
for the same request: same request id in the instance actions, same
user and project.

Values a flow needs but that cannot be persisted (the context object,
the scheduler client, RPC clients) are injected as transient values on
every run, resumed runs included; a resumed run also gets ``resumed``
(True), for atoms that must undo what a crashed run of theirs left.
"""

import collections
import os
import uuid

from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa
from taskflow.persistence import models
from taskflow import states
from taskflow import storage as tf_storage

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import fencing
from cellboot.flowrun import kinds
from cellboot.flowrun import lookup
from cellboot.flowrun import tables

LOG = logging.getLogger(__name__)

# States of a flow detail that no engine has finished. None: saved but
# never started (its conductor died in between).
UNFINISHED_STATES = (None, states.PENDING, states.RUNNING,
                     states.RESUMING, states.REVERTING, states.SUSPENDING,
                     states.SUSPENDED)

# States of a flow detail no engine has run an atom of: running it is a
# first run, not a resumption.
NOT_STARTED_STATES = (None, states.PENDING)

# Context keys that must never be written to a database.
_SECRET_CONTEXT_KEYS = ('auth_token', 'auth_token_info')

# The namespace of the uuid5 of every cellboot flow. Never change it: it
# names the flows already persisted, which a redelivered cast must find.
FLOW_NAMESPACE = uuid.UUID('9b0c6a52-5d1e-4f43-9c59-1f0e6c1b5a7d')


def owner_name():
    """This conductor process's name: ``HOST:PID``."""
    return f'{CONF.host}:{os.getpid()}'


def flow_uuid(kind, key):
    """The uuid of the flow of ``kind`` about ``key`` (see the module doc)."""
    return str(uuid.uuid5(FLOW_NAMESPACE, f'{kind}:{key}'))


def boot_flow_key(build_requests):
    """What identifies one boot request: its reservation id.

    The API gives every instance of a request the same
    ``reservation_id``; a request without one (a foreign API) is known
    by its instances' uuids, sorted.
    """
    reservations = {(br.get('instance') or {}).get('reservation_id')
                    for br in build_requests}
    if len(reservations) == 1 and None not in reservations \
            and '' not in reservations:
        return reservations.pop()
    return ','.join(sorted(br['instance_uuid'] for br in build_requests))


def reschedule_flow_key(instance_uuid, retry):
    """What identifies one reschedule: the instance and its attempt."""
    return f'{instance_uuid}:{(retry or {}).get("num_attempts", 0)}'


def persisted_context(context):
    """``context`` as a dict fit for the flow meta (no token)."""
    values = context.to_dict()
    for key in _SECRET_CONTEXT_KEYS:
        values.pop(key, None)
    values.pop('cell_uuid', None)
    return jsonutils.to_primitive(values)


def flow_meta(kind, instance_uuids, context, owner=None, posted=False):
    """The meta of a new flow detail (see the module docstring).

    ``owner``: the conductor creating it (default ``owner_name()``).
    ``posted``: that conductor posts it on a jobboard rather than run it
    (nobody has it in hand until a claim).
    """
    meta = {
        'kind': kind,
        'instance_uuids': list(instance_uuids),
        'conductor': CONF.host,
        'owner': owner or owner_name(),
        'started_at': timeutils.utcnow().isoformat(),
        'request_id': context.request_id,
        'context': persisted_context(context),
    }
    if posted:
        meta['posted'] = True
    return meta


def _held(meta):
    """Whether the owner the meta names has had the flow in hand."""
    return bool(meta.get('owned_since')) or not meta.get('posted')


def _new_book(flow, book_name, meta, store, uuid_=None):
    """A logbook holding one flow detail for ``flow``, not saved yet.

    The store goes with it, as the detail of TaskFlow's injector atom
    (where ``Storage.inject`` would have put it with two more
    transactions).
    """
    uuid_ = uuid_ or uuidutils.generate_uuid()
    book = models.LogBook(book_name, uuid=uuid_)
    book.meta = {'request_id': meta.get('request_id')}
    flow_detail = models.FlowDetail(flow.name, uuid_)
    flow_detail.meta = dict(meta)
    injector = models.TaskDetail(tf_storage.Storage.injector_name,
                                 uuidutils.generate_uuid())
    injector.results = dict(store or {})
    injector.state = states.SUCCESS
    flow_detail.add(injector)
    book.add(flow_detail)
    return book


def create_flow(backend, flow, store, uuid_, book_name, meta):
    """Save ``flow`` unless a flow of ``uuid_`` exists; see ``create``."""
    book = _new_book(flow, book_name, meta, store, uuid_)
    (flow_detail,) = book
    if uuid_ is None:
        tables.insert_book(backend.engine, book)
        return flow_detail, True
    try:
        # No check first: the insert is the check, and the normal path
        # (a new request) pays no extra query.
        tables.insert_book(backend.engine, book)
    except sa.exc.IntegrityError:
        # This request's flow exists: another conductor (or an earlier
        # delivery of the same cast) created it.
        return backend.get_connection().get_flow_details(uuid_), False
    return flow_detail, True


def create(kind, store, persistence, uuid_=None, book_name=None,
           meta=None):
    """Save a new flow of ``kind`` (logbook and flow detail) unless it
    exists.

    ``uuid_`` is the flow's (and its logbook's) uuid, from ``flow_uuid``
    (None: a random one). ``meta`` gets ``kind``. Returns
    ``(flow_detail, created)``: ``created`` is False, and the detail the
    existing one, when a flow of that uuid was already saved.
    """
    flow = kinds.flow(kind)
    return create_flow(flow_db.get_backend(persistence), flow, store, uuid_,
                       book_name or flow.name, dict(meta or {}, kind=kind))


def unfinished(persistence, kind, level, conductor=None, warn=True):
    """Flow summaries of ``kind`` left unfinished, oldest first.

    ``level`` (``kinds.SUPER`` or ``kinds.CELL``) is where
    ``persistence`` is: unfinished flows that are corrupt there
    (``kinds.corruption``), whatever their kind, are left out, each with
    a WARNING unless ``warn`` is False (a caller that only reads which
    instances flows work on). ``conductor`` limits them to the flows a
    conductor of that host started (a conductor resumes its own flows).
    """
    location = (lookup.FLOW_DATABASE if level == kinds.SUPER
                else 'cell database')
    found = []
    for flow in lookup.find_flows(persistence, location=location,
                                  level=level):
        if flow['state'] not in UNFINISHED_STATES:
            continue
        if flow['corrupt']:
            if warn:
                lookup.warn_if_corrupt(flow)
            continue
        if flow['kind'] != kind:
            continue
        if conductor is not None and flow['conductor'] != conductor:
            continue
        found.append(flow)
    return found


def owner_of(meta):
    """Who runs (or last ran) a flow, from its meta."""
    meta = meta or {}
    return meta.get('owner') or meta.get('conductor')


def stored_context(flow_meta_values):
    """The request context a flow was started for."""
    values = dict(flow_meta_values.get('context') or {})
    return cb_context.RequestContext.from_dict(values)


# What ``take_over`` found: is the run a resumption, its fencing token,
# and whether another run may have written the flow since it was read.
TakenOver = collections.namedtuple('TakenOver',
                                   ['resumed', 'token', 'reread'])


def take_over(persistence, flow_detail, owner=None, created=False):
    """Make ``owner`` the conductor running ``flow_detail``; a TakenOver.

    ``resumed``: whether the run is a resumption (see the module
    docstring: the flow started, or another owner is recorded);
    ``token``: the run's fencing token (``fencing``); ``reread``: the
    flow had started, or another conductor had it in hand, so a run of
    that conductor may have written it after ``flow_detail`` was read
    and before this take-over fenced it out: the caller reads it again
    (``load_detail``) before running it. The flow's
    generation is advanced for every run but the creator's first
    (``created``: the caller saved the flow just now, with the first
    generation, and runs it at once), in the take-over's transaction.
    Unless the flow's recorded owner already has it in hand and it never
    started (its creator's first run), that transaction also writes
    ``owner``, ``owned_since`` and, when another conductor's work is
    taken over, one more ``resumptions`` entry, into the database and
    into ``flow_detail.meta`` (which the engine's storage merges back).
    """
    owner = owner or owner_name()
    meta = flow_detail.meta or {}
    started = flow_detail.state not in NOT_STARTED_STATES
    previous = owner_of(meta)
    held = _held(meta)
    engine = flow_db.get_backend(persistence).engine
    if not started and previous == owner and held:
        if created:
            return TakenOver(False, fencing.FIRST, False)
        with engine.begin() as conn:
            return TakenOver(False, fencing.advance(conn, flow_detail.uuid),
                             False)
    taken_from_holder = previous != owner and held
    now = timeutils.utcnow().isoformat()

    def _taken(stored):
        stored.update(owner=owner, owned_since=now)
        if started or taken_from_holder:
            stored['resumptions'] = list(
                stored.get('resumptions') or ()) + [
                {'by': owner, 'at': now,
                 'from_state': flow_detail.state or states.PENDING}]
        return stored

    with engine.begin() as conn:
        # The fence first: the order of every writer of the flow
        # (``storage``), so that two of them never wait on each other.
        token = fencing.advance(conn, flow_detail.uuid)
        flow_detail.meta = tables.merge_flow_meta(
            conn, flow_detail.uuid, _taken, fallback=meta)
    return TakenOver(started or previous != owner, token,
                     started or taken_from_holder)


def load_detail(persistence, flow_uuid):
    """The flow detail ``flow_uuid`` with its atoms (TaskFlow NotFound)."""
    return flow_db.get_connection(persistence).get_flow_details(flow_uuid)
