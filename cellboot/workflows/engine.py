"""The one place that loads and runs cellboot's flows.

A flow runs persisted (``persistence`` is a database URL holding
TaskFlow's tables: the flow database for boot flows, the cell database
for reschedule flows) or in memory only (``persistence=None``, which the
benchmarks use to measure what persistence costs).

A persisted flow gets a logbook of its own, named after the request, and
one flow detail whose meta says what it is about::

    {'kind': 'boot', 'instance_uuids': [...], 'conductor': HOST,
     'started_at': ISO 8601, 'request_id': ..., 'context': {...},
     'factory': {'name': 'cellboot.workflows.boot.get_flow', ...}}

``lookup`` finds flows by instance uuid from that meta; ``resume``
rebuilds an unfinished flow from its factory and finishes it. The
request context is kept (without its token) so that a resumed flow acts
for the same request: same request id in the instance actions, same
user and project.

Values a flow needs but that cannot be persisted (the context object,
the scheduler client, RPC clients) are injected as transient values on
every run, resumed runs included; a resumed run also gets ``resumed``
(True), for atoms that must undo what a crashed run of theirs left.
"""

import contextlib

from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import reflection
from oslo_utils import timeutils
from oslo_utils import uuidutils
from taskflow import engines
from taskflow.persistence import models
from taskflow import states
from taskflow import storage as tf_storage
from taskflow.utils import persistence_utils as tf_persistence_utils

from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db import flow_db
from cellboot.workflows import listeners
from cellboot.workflows import lookup
from cellboot.workflows import taskflow_engine

LOG = logging.getLogger(__name__)

# States of a flow detail that no engine has finished. None: saved but
# never started (its conductor died in between).
UNFINISHED_STATES = (None, states.PENDING, states.RUNNING,
                     states.RESUMING, states.REVERTING, states.SUSPENDING,
                     states.SUSPENDED)

# Context keys that must never be written to a database.
_SECRET_CONTEXT_KEYS = ('auth_token', 'auth_token_info')


def persisted_context(context):
    """``context`` as a dict fit for the flow meta (no token)."""
    values = context.to_dict()
    for key in _SECRET_CONTEXT_KEYS:
        values.pop(key, None)
    values.pop('cell_uuid', None)
    return jsonutils.to_primitive(values)


def flow_meta(kind, instance_uuids, context):
    """The meta of a new flow detail (see the module docstring)."""
    return {
        'kind': kind,
        'instance_uuids': list(instance_uuids),
        'conductor': CONF.host,
        'started_at': timeutils.utcnow().isoformat(),
        'request_id': context.request_id,
        'context': persisted_context(context),
    }


def _factory_details(flow_factory):
    """What TaskFlow's ``flow_from_detail`` needs to rebuild the flow."""
    return {'name': reflection.get_callable_name(flow_factory),
            'args': [], 'kwargs': {}}


def _new_flow_detail(backend, flow, flow_factory, book_name, meta, store):
    """Save a logbook holding one flow detail for ``flow``; return it.

    The store goes in the same transaction, as the detail of TaskFlow's
    injector atom (where ``Storage.inject`` would have put it with two
    more transactions).
    """
    book = models.LogBook(book_name)
    book.meta = {'request_id': meta.get('request_id')}
    flow_detail = models.FlowDetail(flow.name, uuidutils.generate_uuid())
    flow_detail.meta = dict(meta, factory=_factory_details(flow_factory))
    injector = models.TaskDetail(tf_storage.Storage.injector_name,
                                 uuidutils.generate_uuid())
    injector.results = dict(store or {})
    injector.state = states.SUCCESS
    flow_detail.add(injector)
    book.add(flow_detail)
    backend.get_connection().save_logbook(book)
    return book.find(flow_detail.uuid)


def run(flow_factory, store, transient, persistence=None, book_name=None,
        meta=None, label=None, extra_listeners=()):
    """Build a flow with ``flow_factory`` and run it to its end.

    ``store`` is persisted with the flow, ``transient`` is not. Returns
    the engine (``engine.storage.fetch(name)`` reads results); raises
    what made the flow revert, once it has reverted.
    ``extra_listeners`` are callables ``engine -> Listener`` attached
    for the run besides the logging and timing ones (tests use them to
    act between two atoms).
    """
    flow = flow_factory()
    if persistence is None:
        engine = taskflow_engine.CellbootEngine(
            flow, tf_persistence_utils.create_flow_detail(flow), None, {})
        engine.storage.inject(store)
        return _run(engine, transient, label or flow.name, extra_listeners)
    backend = flow_db.get_backend(persistence)
    flow_detail = _new_flow_detail(backend, flow, flow_factory,
                                   book_name or flow.name, meta or {}, store)
    engine = taskflow_engine.CellbootEngine(flow, flow_detail, backend, {})
    return _run(engine, transient,
                label or f'{flow.name} {flow_detail.uuid}', extra_listeners,
                persistence)


def _run(engine, transient, label, extra_listeners=(), persistence=None):
    engine.storage.inject(transient, transient=True)
    with contextlib.ExitStack() as stack:
        stack.enter_context(listeners.attached(engine, label, persistence))
        for make_listener in extra_listeners:
            stack.enter_context(make_listener(engine))
        engine.run()
    return engine


def unfinished(persistence, kind, conductor=None):
    """Flow summaries of ``kind`` left unfinished, oldest first.

    ``conductor`` limits them to the flows a conductor of that host
    started (a conductor resumes its own flows).
    """
    found = [flow for flow in lookup.find_flows(persistence, kind=kind)
             if flow['state'] in UNFINISHED_STATES]
    if conductor is not None:
        found = [flow for flow in found
                 if flow['meta'].get('conductor') == conductor]
    return found


def stored_context(flow_meta_values):
    """The request context a flow was started for."""
    values = dict(flow_meta_values.get('context') or {})
    return cb_context.RequestContext.from_dict(values)


def resume(persistence, flow_uuid, transient_for, extra_listeners=()):
    """Finish an unfinished flow from its last persisted atom.

    ``transient_for(context)`` returns the transient values for the
    flow's stored request context. Returns the engine; raises what made
    the flow revert, once it has reverted.
    """
    backend = flow_db.get_backend(persistence)
    flow_detail = backend.get_connection().get_flow_details(flow_uuid)
    context = stored_context(flow_detail.meta or {})
    LOG.info('Resuming flow %s (%s) of request %s, left %s.',
             flow_detail.name, flow_uuid, context.request_id,
             flow_detail.state)
    engine = taskflow_engine.CellbootEngine(
        engines.flow_from_detail(flow_detail), flow_detail, backend, {})
    transient = dict(transient_for(context), resumed=True)
    return _run(engine, transient, f'{flow_detail.name} {flow_uuid}',
                extra_listeners, persistence)
