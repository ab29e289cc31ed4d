"""A flow step that meets a database outage runs again, not fails the flow.

A conductor's flow steps write to the API database, the cells'
databases and, through the scheduler, to the resource tables. When one
of them cannot be reached for a few seconds (a restart, a failover), the
step would fail, and the flow revert or end FAILURE, for an outage that
ends before a user would notice. Every atom of every flow run on
cellboot's engine (``cellboot.flowrun.engine``) therefore runs through
the executors here: an ``execute`` or ``revert`` that raised a lost
connection (``is_outage``) is run again with the project's outage policy
(``cellboot.db.outage.ride_out``, for ``[database]
outage_retry_seconds``), and only once that bound is spent does the
error reach TaskFlow as the step's failure.

Why running a step again is safe when the attempt before it committed
part of its writes: steps are idempotent already, because a flow resumed
after its conductor died runs the step that was running again. A retry
is that very case, and is told so the same way: ``execute`` gets
``resumed=True`` when it takes that argument (``schedule`` then gives
back what the failed attempt may have claimed before it claims again).
Reverts are written to be run again too (they settle instances by
conditional updates, release claims idempotently).

An outage is a lost connection of this process's databases
(``cellboot.db.outage.is_connection_lost``) or of a service called over
RPC: the scheduler's ``DBConnectionError`` reaches the conductor as
oslo.messaging's ``RemoteError`` naming it (``cellboot.exception`` is
the only module whose errors cross the bus as themselves); and the API
level's scheduler finding that no cell it could send a request to
answers (``CellsUnavailable``: a broker restart, every cell database
down).

The executors are TaskFlow's serial ones, each atom handed to them
wrapped (``_Riding``) so that TaskFlow's own code calls its hooks and
its ``execute``/``revert`` as always.

They subscribe nothing to an atom's progress notifier, which TaskFlow's
would (``TaskExecutor``), so that one atom can serve engines running at
once: the atoms of a kind's flow are shared by every engine of the
process (``cellboot.flowrun.shared``).
"""

import inspect

from taskflow.engines.action_engine import executor as tf_executor

from cellboot.db import outage
from cellboot import exception
from cellboot.rpc import client as rpc_client

# The argument that tells an atom it runs again after a run that may
# have done part of its work.
RESUMED = 'resumed'


def is_outage(exc):
    """A lost database connection, here or in a service called over RPC,
    or no cell that answers."""
    return (outage.is_connection_lost(exc)
            or isinstance(exc, exception.CellsUnavailable)
            or rpc_client.is_remote_outage(exc))


class _Riding:
    """An atom whose ``execute`` and ``revert`` ride out an outage.

    Everything else (name, notifier, pre/post hooks) is the atom's.
    """

    def __init__(self, atom):
        self._atom = atom

    def __getattr__(self, name):
        return getattr(self._atom, name)

    def execute(self, **arguments):
        atom = self._atom
        again = arguments
        if RESUMED in inspect.signature(atom.execute).parameters:
            again = dict(arguments, **{RESUMED: True})
        return outage.ride_out(
            lambda: atom.execute(**arguments),
            lambda: atom.execute(**again), should_retry=is_outage,
            what=f'Flow step {atom.name} (execute)')

    def revert(self, *args, **kwargs):
        atom = self._atom
        return outage.ride_out(
            lambda: atom.revert(*args, **kwargs), should_retry=is_outage,
            what=f'Flow step {atom.name} (revert)')


class TaskExecutor(tf_executor.SerialTaskExecutor):
    """TaskFlow's serial task executor, each task ``_Riding``.

    The engine's ``progress_callback`` is dropped, never subscribed to
    the task's notifier. TaskFlow's executor subscribes it for the time
    of ``execute``/``revert``, and its ``TaskAction.change_state`` has
    the task notify its progress on every state change, in whichever
    engine makes it: on a task shared by two engines running at once,
    one engine's state changes would reach the other's callback, which
    writes a progress into that other run's storage from this run's
    thread (and waits on that storage's lock, which its own thread holds
    while the task runs); two engines would also change one notifier at
    once, which TaskFlow's ``Notifier`` does not allow. What is lost is
    a progress a task reports itself (``update_progress``): none of
    cellboot's does, and the engine's own (0.0, then 1.0) is never
    recorded (``cellboot.flowrun.storage``).
    """

    def execute_task(self, task, task_uuid, arguments,
                     progress_callback=None):
        future = super().execute_task(_Riding(task), task_uuid, arguments)
        future.atom = task
        return future

    def revert_task(self, task, task_uuid, arguments, result, failures,
                    progress_callback=None):
        future = super().revert_task(_Riding(task), task_uuid, arguments,
                                     result, failures)
        future.atom = task
        return future


class RetryExecutor(tf_executor.SerialRetryExecutor):
    """TaskFlow's serial executor of retry controllers, each ``_Riding``."""

    def execute_retry(self, retry_atom, arguments):
        future = super().execute_retry(_Riding(retry_atom), arguments)
        future.atom = retry_atom
        return future

    def revert_retry(self, retry_atom, arguments):
        future = super().revert_retry(_Riding(retry_atom), arguments)
        future.atom = retry_atom
        return future
