"""Each kind's flow, built once per process and run by every engine.

Why: building a flow is TaskFlow inspecting the signatures of every
atom's ``execute`` and ``revert`` (``Atom.__init__``, then
``inspect.signature``), and compiling it (``PatternCompiler``) builds
and freezes its graph; a super conductor under load spent about a tenth
of its CPU doing both anew for every boot, for flows that never change.
``flow_of(factory)`` builds a flow once and hands the same objects to
every engine of the process, in every thread; ``compiler_of(flow)`` is
that flow's one compiler, whose compilation its engines share
(``cellboot.flowrun.engine``).

Why sharing is safe (TaskFlow 6.x, read for this):

* An atom is not changed once built: what an engine reads of it (name,
  rebind, requires, optional, provides, inject) is set by its
  ``__init__``, and neither the action engine nor its storage nor
  cellboot's listeners set anything on an atom or a flow. What a run
  keeps (states, results, the actions bound to its storage, the scope
  walkers) is its engine's. cellboot's atoms keep nothing between calls
  either: what a run needs is in its store (the per-run values are
  transient ones, given anew to every run).
* The exception is a task's progress notifier, to which TaskFlow's
  executors subscribe the running engine: cellboot's subscribe nothing
  (``cellboot.flowrun.outages.TaskExecutor`` says why).
* A compilation is not changed once made: ``PatternCompiler.compile``
  freezes its graph and tree and returns that one compilation every
  time (under its lock), and what a runtime derives from it is kept in
  the runtime, never on the graph.

A flow handed out here must never be changed (``add``, ``link``): the
factories' flows are not, and ``flows show`` only reads them.
"""

import threading

from taskflow.engines.action_engine import compiler as tf_compiler

_lock = threading.Lock()
# Factory -> the flow it built; flow -> that flow's compiler. Entries
# live as long as the process (one per kind of flow).
_flows = {}
_compilers = {}


def flow_of(factory):
    """The flow ``factory()`` returns, built once in this process."""
    flow = _flows.get(factory)
    if flow is None:
        with _lock:
            flow = _flows.get(factory)
            if flow is None:
                flow = factory()
                _compilers[flow] = tf_compiler.PatternCompiler(flow)
                _flows[factory] = flow
    return flow


def compiler_of(flow):
    """The compiler every engine of ``flow`` shares; None for a flow
    that ``flow_of`` did not build (each of its engines compiles it)."""
    return _compilers.get(flow)
