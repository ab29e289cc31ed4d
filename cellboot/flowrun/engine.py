"""cellboot's TaskFlow engine: the serial engine on a leaner storage.

The engine every cellboot flow runs on (``cellboot.flowrun.runner``
builds it, and runs it through ``run_engine``, the one call of
TaskFlow's ``run`` in cellboot); what it writes, and when, is its
storage's business (``cellboot.flowrun.storage``, where the measured
reasons are). Its
atoms run through executors that ride out a database outage
(``cellboot.flowrun.outages``). The engines of a kind's flow share its
compilation (``cellboot.flowrun.shared``).
"""

import contextlib

from taskflow.engines.action_engine import engine as action_engine
from taskflow import flow as tf_flow
from taskflow.utils import misc
from taskflow.utils import persistence_utils as tf_persistence_utils

from cellboot.flowrun import kinds
from cellboot.flowrun import listeners
from cellboot.flowrun import metrics_listener
from cellboot.flowrun import outages
from cellboot.flowrun import shared
from cellboot.flowrun import storage as flow_storage


class CellbootEngine(action_engine.SerialActionEngine):
    """TaskFlow's serial engine on ``_Storage``.

    Built directly rather than by name through ``engines.load``
    (stevedore), so that it does not depend on installed entry points.
    ``_compiled`` and ``_runtime`` are the action engine's: the scope
    fetcher is the one TaskFlow's own ``storage`` property builds.
    ``_task_executor`` and ``_retry_executor`` are the action engine's
    too, replaced before the engine compiles the flow (which hands them
    to its runtime). So is ``_compiler``, replaced by the flow's shared
    one when the flow is a kind's (``shared.compiler_of``): its
    compilation is made once in the process (TaskFlow's compiler keeps
    it, frozen), and each engine builds only its own runtime from it.
    """

    def __init__(self, flow, flow_detail, backend, options):
        super().__init__(flow, flow_detail, backend, options)
        self._task_executor = outages.TaskExecutor()
        self._retry_executor = outages.RetryExecutor()
        compiler = shared.compiler_of(flow)
        if compiler is not None:
            self._compiler = compiler

    @misc.cachedproperty
    def storage(self):
        def _scope_fetcher(atom_name):
            if self._compiled:
                return self._runtime.fetch_scopes_for(atom_name)
            return None

        return flow_storage.Storage(
            self._flow_detail, backend=self._backend,
            scope_fetcher=_scope_fetcher,
            rerun_safe=rerun_safe_atoms(self._flow))

    def run_iter(self, timeout=None):
        """TaskFlow's run, then one write of what is still deferred.

        The flush also runs when the run raises an Exception (a reverted
        flow), after the listeners heard the final state (their
        durations go along). Not on a BaseException that is no Exception
        (the process is going away): what is deferred is then lost as
        with a SIGKILL, which the rules above make harmless, and which
        the tests that "kill" a conductor with one rely on. A run fenced
        out (``fencing.FencedOut``, a BaseException for that reason)
        stops the same way: nothing more of it is written.
        """
        try:
            yield from super().run_iter(timeout=timeout)
        except Exception:
            self.storage.flush()
            raise
        else:
            self.storage.flush()


def rerun_safe_atoms(flow):
    """The names of ``flow``'s atoms whose class says ``rerun_safe``.

    (What that means, and what the storage makes of it:
    ``cellboot.flowrun.storage``.) Nested flows included.
    """
    names = set()
    for node, _meta in flow.iter_nodes():
        if isinstance(node, tf_flow.Flow):
            names |= rerun_safe_atoms(node)
        elif getattr(node, 'rerun_safe', False):
            names.add(node.name)
    return frozenset(names)


def run_engine(engine, transient, label, extra_listeners=(),
               persistence=None):
    """Run ``engine`` to its end with its transient values and listeners.

    The one call of ``engine.run`` in cellboot. ``extra_listeners`` are
    callables ``engine -> Listener`` attached besides the logging,
    timing and metrics ones. Returns the engine; raises what made the
    flow revert.
    """
    engine.storage.inject(transient, transient=True)
    with contextlib.ExitStack() as stack:
        stack.enter_context(listeners.attached(engine, label, persistence))
        stack.enter_context(metrics_listener.MetricsListener(engine))
        for make_listener in extra_listeners:
            stack.enter_context(make_listener(engine))
        engine.run()
    return engine


def run_in_memory(kind, store, transient, label=None, extra_listeners=()):
    """Run the flow of ``kind`` unpersisted; the engine.

    What a conductor does with ``[conductor] persist_flows = False``,
    and what the benchmarks use to measure what persistence costs.
    """
    flow = kinds.flow(kind)
    engine = CellbootEngine(
        flow, tf_persistence_utils.create_flow_detail(flow), None, {})
    engine.storage.inject(store)
    return run_engine(engine, transient, label or flow.name,
                      extra_listeners)
