"""The storage of cellboot's engine: TaskFlow's, writing less.

What the engine persists, and how often, is one concept in one place:
the persistence cost of a flow is decided here (the engine that uses
it is ``cellboot.flowrun.engine``; the statements are in
``cellboot.flowrun.tables``).

What a flow on a database writes, and when (``Storage``):

* every change (flow state, atom states, results, failures, meta) is
  applied to the in-memory details at once and written later, in one
  transaction with the changes before it (a *flush*);
* a flush happens right before an atom starts to execute or revert
  whenever an atom's outcome is not written yet, unless every such
  outcome is the success of a *rerun-safe* atom (below): a completed
  atom's result is durable before the next atom acts on the world
  (casts, claims), which is what resuming a flow relies on (an atom
  whose result was saved is not run again);
* and once when the run stops (``engine.CellbootEngine.run_iter``),
  with the flow's final state and the durations the timing listener recorded.

Every flush of a run first holds the run's fence in its transaction
(``cellboot.flowrun.fencing``; one UPDATE more): once another run took
the flow over, the flush writes nothing and raises ``FencedOut``, which
stops the engine. A flush precedes every atom but the run's first
(whose token was taken just before, in the take-over's transaction), so
a run that lost its flow starts no further atom: only a take-over in the
instant between that flush and the atom's ``execute`` escapes it.

A flush that the database rolls back and asks for again (deadlock, lock
wait timeout, serialization failure, SQLite busy) is repeated whole, by
the project's one retry policy (``cellboot.db.retry``, which reads the
driver's codes since the flow database's engine is not oslo.db's). A
flush that lost its connection (the flow database restarting, failing
over) is repeated too (``cellboot.db.outage``), for ``[database]
outage_retry_seconds``; any other error ends the run as before.

An atom is rerun-safe (its class says ``rerun_safe = True``) when
running it again, once it and any atoms after it have run, does what it
did and returns what it returned: its outcome follows from inputs that
are durable already, and its effects are replays that it recognises (an
instance that exists, a build request it removed itself). Its success
need not be durable before the next atom starts; it is written with the
next flush that something else needs, or at the end. Its failure, and
any other change of its state, is written as any atom's. A boot flow's
atoms between ``schedule`` and the cast are all so (``schedule``'s
choice of hosts is not: run again, it may choose others), so its run
writes once after ``schedule`` and once at the end.

What a SIGKILL can lose, and why that is harmless: the RUNNING state of
the atom that was running (a resumed flow treats it as PENDING and runs
it again; atoms are idempotent), the flow's own RUNNING state while its
first atom runs (a flow detail that is PENDING or has no state is
unfinished too), the successes of the rerun-safe atoms since the last
flush (run again on resume, as replays), and the outcome of the last
atom with the flow's final state (the last atom runs again on resume: a
duplicate cast, which the compute host drops). A one-instance boot flow
went from 17 persistence transactions to 6 (plus the logbook), then to
2 with the rerun-safe atoms; each is a plain UPDATE or INSERT, where
TaskFlow's backend reads the row (and, for a flow state, every atom row)
back, merges and rewrites every atom of the flow.
"""

from taskflow.persistence.backends import impl_sqlalchemy
from taskflow import states
from taskflow import storage as tf_storage

from cellboot.db import outage
from cellboot.db import retry
from cellboot.flowrun import tables


# Atom states whose change is not worth a write of its own: resuming
# treats an atom left RUNNING like a PENDING one.
_QUIET_STATES = frozenset({states.RUNNING})
# An atom entering these states is about to act: what came before it
# must be durable first.
_ACTING_STATES = frozenset({states.RUNNING, states.REVERTING})


class Storage(tf_storage.Storage):
    """TaskFlow's storage, writing less and in fewer transactions.

    * No progress: the engine writes every task's progress (0.0, then
      1.0) next to its state changes, which says nothing the state does
      not; a progress a task reports itself never reaches its engine
      (``cellboot.flowrun.outages.TaskExecutor`` says why).
    * On a SQLAlchemy backend, writes are deferred and folded (see the
      module docstring); on any other backend (the in-memory one of an
      unpersisted flow) they go through as TaskFlow makes them.
    """

    def __init__(self, flow_detail, backend=None, scope_fetcher=None,
                 rerun_safe=frozenset()):
        super().__init__(flow_detail, backend=backend,
                         scope_fetcher=scope_fetcher)
        # The names of the flow's rerun-safe atoms (module doc).
        self._rerun_safe = frozenset(rerun_safe)
        self._deferred = isinstance(self._backend,
                                    impl_sqlalchemy.SQLAlchemyBackend)
        self._new_atoms = {}       # uuid -> atom detail, to insert
        self._changed_atoms = {}   # uuid -> atom detail, to update
        self._changed_meta = {}    # uuid -> atom detail, meta only
        self._flow_state_changed = False
        self._flow_meta_changes = {}
        self._written_meta = dict(flow_detail.meta or {})
        self._outcome_pending = False
        self._quiet = False
        self._fence = None

    def fence_with(self, fence):
        """Hold ``fence`` (a ``fencing.Fence``) in every write from now."""
        self._fence = fence

    # -- what TaskFlow's storage calls to save ------------------------------

    def _save_atom_detail(self, conn, original_atom_detail, atom_detail):
        if not self._deferred:
            return super()._save_atom_detail(conn, original_atom_detail,
                                             atom_detail)
        uuid = original_atom_detail.uuid
        if uuid not in self._new_atoms and (
                uuid in self._changed_atoms or
                _outcome_changed(original_atom_detail, atom_detail)):
            self._changed_atoms[uuid] = original_atom_detail
        elif uuid not in self._new_atoms:
            self._changed_meta[uuid] = original_atom_detail
        original_atom_detail.update(atom_detail)
        if not (self._quiet or self._may_wait(original_atom_detail)):
            self._outcome_pending = True
        return original_atom_detail

    def _may_wait(self, atom_detail):
        """Whether this change of ``atom_detail`` need not be durable yet."""
        return (atom_detail.state == states.SUCCESS and
                atom_detail.name in self._rerun_safe)

    def _save_flow_detail(self, conn, original_flow_detail, flow_detail):
        if not self._deferred:
            return super()._save_flow_detail(conn, original_flow_detail,
                                             flow_detail)
        for atom_detail in flow_detail:
            if original_flow_detail.find(atom_detail.uuid) is None:
                self._new_atoms[atom_detail.uuid] = atom_detail
        if flow_detail.state != original_flow_detail.state:
            self._flow_state_changed = True
        # Against what was last written, not against the original: a
        # clone of a flow detail with empty meta shares its meta dict.
        for key, value in (flow_detail.meta or {}).items():
            if key not in self._written_meta or \
                    self._written_meta[key] != value:
                self._flow_meta_changes[key] = value
        original_flow_detail.update(flow_detail)
        return original_flow_detail

    # -- when it is written --------------------------------------------------

    def set_atom_state(self, atom_name, state):
        self._quiet = state in _QUIET_STATES
        try:
            super().set_atom_state(atom_name, state)
        finally:
            self._quiet = False
        if state in _ACTING_STATES and self._outcome_pending:
            with self._lock.write_lock():
                self._flush()

    def set_task_progress(self, task_name, progress, details=None):
        """Nothing: no progress is recorded (see the class)."""

    def flush(self):
        """Write every deferred change, in one transaction."""
        with self._lock.write_lock():
            self._flush()

    def _flush(self):
        changed = self._changed_atoms
        meta_only = {uuid: detail
                     for uuid, detail in self._changed_meta.items()
                     if uuid not in changed}
        if not (self._new_atoms or changed or meta_only or
                self._flow_state_changed or self._flow_meta_changes):
            return
        outage.ride_out(lambda: self._write(changed, meta_only),
                        lambda: self._write(changed, meta_only, again=True),
                        what=f'Flow {self._flowdetail.uuid}: its write')
        self._new_atoms = {}
        self._changed_atoms = {}
        self._changed_meta = {}
        self._flow_state_changed = False
        self._written_meta.update(self._flow_meta_changes)
        self._flow_meta_changes = {}
        self._outcome_pending = False

    @retry.on_contention
    def _write(self, changed, meta_only, again=False):
        """The flush's transaction; repeated whole when the database asks.

        Safe to repeat: an attempt that failed was rolled back whole (the
        new atoms' INSERT with it), and every attempt writes the same
        values from the in-memory details (the storage's lock is held),
        which are forgotten only once one attempt committed. ``again``:
        after a lost connection, whose attempt may have committed: the
        new atoms already in place are not inserted twice; the updates
        and the meta merge write what they wrote.
        """
        flow_uuid = self._flowdetail.uuid
        new_atoms = list(self._new_atoms.values())
        with self._backend.engine.begin() as conn:
            if self._fence is not None:
                # First: the run still has the flow, and keeps it (the
                # row's lock) until this transaction ends.
                self._fence.hold(conn)
            if self._flow_state_changed or self._flow_meta_changes:
                # The flow row first: on SQLite its UPDATE opens the
                # write transaction, so that the meta read below cannot
                # be stale.
                tables.set_flow_state(conn, flow_uuid,
                                      self._flowdetail.state)
            if again:
                new_atoms = tables.missing_atoms(conn, new_atoms)
            tables.insert_atoms(conn, flow_uuid, new_atoms)
            tables.update_atoms(conn, changed)
            tables.update_atom_meta(conn, meta_only)
            if self._flow_meta_changes:
                # Merged into the stored meta: a conductor taking the
                # flow over writes its own keys (owner, resumptions).
                changes = self._flow_meta_changes
                tables.merge_flow_meta(
                    conn, flow_uuid, lambda stored: dict(stored, **changes))


def _outcome_changed(stored, changed):
    """True unless only the meta of an atom detail changed."""
    return any(getattr(stored, field) != getattr(changed, field)
               for field in tables.OUTCOME_FIELDS)
