"""cellboot's TaskFlow engine: the serial engine on a leaner storage.

Kept apart from ``engine`` (which loads, runs and resumes flows) so that
what the engine persists, and how often, is one concept in one place:
the persistence cost of a flow is decided here.
"""

from taskflow.engines.action_engine import engine as action_engine
from taskflow import storage as tf_storage
from taskflow.utils import misc


class _Storage(tf_storage.Storage):
    """TaskFlow's storage, without the engine's automatic progress.

    The engine writes every task's progress (0.0, then 1.0) next to its
    state changes: two more transactions per task, which say nothing
    the task's state does not. They were 12 of a boot flow's 29
    persistence transactions. Progress a task reports itself (with
    details) is still written.
    """

    def set_task_progress(self, task_name, progress, details=None):
        if details is None:
            return
        super().set_task_progress(task_name, progress, details=details)


class CellbootEngine(action_engine.SerialActionEngine):
    """TaskFlow's serial engine on ``_Storage``.

    Built here directly rather than by name through ``engines.load``
    (stevedore), so that it does not depend on installed entry points;
    it is also registered as the ``cellboot`` entry point of
    ``taskflow.engines`` for a jobboard conductor to name.
    """

    @misc.cachedproperty
    def storage(self):
        def _scope_fetcher(atom_name):
            if self._compiled:
                return self._runtime.fetch_scopes_for(atom_name)
            return None

        return _Storage(self._flow_detail, backend=self._backend,
                        scope_fetcher=_scope_fetcher)
