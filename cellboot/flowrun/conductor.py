"""The jobboard conductor: claims jobs and runs their flows.

One ``FlowConductor`` (TaskFlow's non-blocking conductor) per conductor
process and board, in a thread of its own (``start_conductor``). It
overrides three of TaskFlow's private hooks (the contract test checks
they are still there): ``_dispatch_job`` and ``_on_job_done``, so that
a claim is checked before anything of its flow is loaded, that only
what ``jobboard.job_flow_uuid`` reads is ever run (a job that says
anything else is trashed), and that a job whose flow did not end is
left to its claim's expiry rather than abandoned (another conductor
would retry at once, in a loop while the cause lasts); and the loop,
``_run_until_dead``, so that a turn costs what its free slots can
take, not what the board holds. See ``cellboot.flowrun.jobboard`` for
the whole picture.
"""

import collections
import functools
import threading
import time

from oslo_log import log as logging
from taskflow.conductors.backends import impl_nonblocking
from taskflow import exceptions as tf_exc

from cellboot.conf import CONF
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import claims
from cellboot.flowrun import flow_states
from cellboot.flowrun import jobboard
from cellboot.flowrun import kinds

LOG = logging.getLogger(__name__)

# What a runner's ``run_saved`` did with a flow (defined here, below
# ``cellboot.flowrun.runner``, which imports this module).
RAN = 'ran'
ALREADY_RUNNING = 'already running'   # in this process: not run again
FENCED = 'fenced'   # taken over by another run meanwhile: stopped

# What becomes of a job once its flow was dispatched.
CONSUME = 'consume'
LEAVE = 'leave'
TRASH = 'trash'


class FlowConductor(impl_nonblocking.NonBlockingConductor):
    """TaskFlow's conductor running a runner's flows.

    ``runner`` (``cellboot.flowrun.runner.Runner``) provides ``kind``
    and ``level`` (its board's kind; the level of the flows it runs, see
    ``kinds``), ``persistence()``, ``owner`` (the claims' owner name)
    and ``run_saved(flow_detail, extra_listeners)``, which runs a saved
    flow (first run or resumption), never raises, and says what it did
    (``runner.RAN``, ``ALREADY_RUNNING`` when this process runs that
    flow already, ``FENCED`` when another run took the flow over).

    Stopping (``stop``) stops claiming; the flows being run finish, and
    ``wait`` returns once they have (they are not suspended, so a
    conductor that is stopped hands no half-run flow to another).
    """

    def __init__(self, runner, board):
        super().__init__(
            runner.owner, board,
            persistence=flow_db.get_backend(runner.persistence()),
            max_simultaneous_jobs=CONF.jobboard.max_simultaneous_jobs)
        self._runner = runner
        self.renewer = claims.ClaimRenewer(board, runner.owner)
        # Set when a turn may find something new to do: a slot freed, a
        # job posted by this process, a stop.
        self._wake = threading.Event()
        # Jobs this process posted, to claim without reading the board
        # (``wake``), oldest first; at most one per slot.
        self._posted = collections.deque()
        # Whether the next turn reads the board: at the first turn, after
        # a turn that found as many free jobs as it had slots (there may
        # be more), after a wait that timed out (jobs posted elsewhere),
        # and when ``_posted`` had no room. Only the loop's thread writes
        # it; ``wake`` asks for a reading through ``_board_asked``.
        self._board_due = True
        self._board_asked = False
        # job uuid -> time.monotonic() when this conductor's claim on it
        # was sent (``claims.Claim.check`` needs no round trip for a
        # while after).
        self._claimed_at = {}

    def wake(self, job=None):
        """Take a turn now; ``job``: a job just posted by this process.

        A job given here is claimed without reading the board for it
        (one Redis round trip less per boot, and no page of the other
        conductors' running jobs to skip). When more jobs wait here than
        there are slots, the rest are left to the board's next reading.
        Without a job, the turn reads the board.
        """
        if job is not None and \
                len(self._posted) < self._max_simultaneous_jobs:
            self._posted.append(job)
        else:
            self._board_asked = True
        self._wake.set()

    def stop(self):
        super().stop()
        self._wake.set()

    def _run_until_dead(self, executor, max_dispatches=None):
        """Claim free jobs while slots are free, until stopped.

        TaskFlow's loop looked at every job of the board at each turn
        (see ``listings``) and, once its slots were full, slept its half
        second even when a flow ended meanwhile: a slot stayed empty for
        up to that long after every flow. Here a turn claims the jobs
        this process posted (``wake``) directly, and reads the board
        only when it may hold more (``_board_due``), asking then for as
        many free jobs as there are free slots
        (``listings.Listings.unclaimed``, oldest first: the jobs posted
        here are among them). The loop sleeps until a flow ends or a
        job is posted in this process, or for ``WAIT_TIMEOUT`` at most
        (jobs that other processes post, or left when their conductor
        died, are seen then). A board that fails (Redis restarting) is
        waited out the same way, turn after turn.
        """
        dispatched = 0
        while not self._wait_timeout.is_stopped():
            self._wake.clear()
            if self._board_asked:
                self._board_asked = False
                self._board_due = True
            try:
                if self._board_due:
                    taken, more = self._take_from_board(executor)
                else:
                    taken, more = self._take_posted(executor), False
            except tf_exc.JobFailure as exc:
                LOG.warning('Board %s cannot be read or claimed from (%s); '
                            'trying again in %s s', self._jobboard.name,
                            exc, self.WAIT_TIMEOUT)
                taken, more = 0, False
            dispatched += taken
            if max_dispatches is not None and dispatched >= max_dispatches:
                return
            if more and len(self._dispatched) < self._max_simultaneous_jobs:
                continue   # others took some: there may be more free
            if not self._wake.wait(self.WAIT_TIMEOUT):
                self._board_due = True

    def _free_slots(self):
        return self._max_simultaneous_jobs - len(self._dispatched)

    def _take_posted(self, executor):
        """Claim the jobs posted here, while slots are free; how many."""
        taken = 0
        while self._free_slots() > 0 and self._posted:
            if self._wait_timeout.is_stopped():
                break
            if self._take(executor, self._posted.popleft()):
                taken += 1
        return taken

    def _take_from_board(self, executor):
        """Claim the board's oldest free jobs; ``(taken, read again)``."""
        # The board lists every job posted here so far.
        self._posted.clear()
        free = self._free_slots()
        found = self._jobboard.listings.unclaimed(
            free, batch=self._max_simultaneous_jobs + free)
        self._board_due = len(found) >= free
        taken = 0
        raced = False
        for job in found:
            if self._wait_timeout.is_stopped():
                break
            if self._take(executor, job):
                taken += 1
            else:
                raced = True
        if raced:
            self._board_due = True
        return taken, raced

    def _take(self, executor, job):
        """Claim ``job`` and dispatch it; False if another got it first."""
        sent = time.monotonic()
        try:
            self._jobboard.claim_free(job, self._name)
        except (tf_exc.UnclaimableJob, tf_exc.NotFound):
            return False
        self._claimed_at[job.uuid] = sent
        try:
            fut = executor.submit(self._dispatch_job, job)
        except RuntimeError:
            # The executor is shutting down: give the job back.
            self._try_finish_job(job, False)
            return False
        fut.job = job
        self._dispatched.add(fut)
        fut.add_done_callback(functools.partial(self._on_job_done, job))
        return True

    def _dispatch_job(self, job):
        """Run the job's flow; what becomes of the job (see module)."""
        with self.renewer.renewing(
                job, self._claimed_at.pop(job.uuid, None)) as claim:
            # First of all: the claim was taken some time ago (a thread
            # of the pool, a busy machine), it is renewed only at the
            # renewer's next tick, and loading the flow takes a
            # database read. A claim that ran out meanwhile may be
            # another conductor's already: then nothing runs here.
            if not claim.check():
                LOG.warning('Job %s: the claim of %s was %s before its '
                            'flow started here; not run', job.uuid,
                            self._runner.owner,
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
                self._runner.persistence()).get_flow_details(flow_uuid)
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
        flow_uuid = jobboard.job_flow_uuid(job, self._runner.kind)
        if flow_uuid is None:
            return self._refuse(job, f'is not a job cellboot posts (its '
                                     f'details: {job.details!r:.200})')
        flow_detail, verdict = self._load(job, flow_uuid)
        if flow_detail is None:
            return verdict
        try:
            kinds.kind_of(flow_uuid, flow_detail.meta, self._runner.level)
        except kinds.CorruptFlow as exc:
            return self._refuse(job, f'names a corrupt flow: {exc}')
        if flow_detail.state in flow_states.FINISHED_STATES:
            LOG.info('Flow %s of job %s has already ended (%s)', flow_uuid,
                     job.uuid, flow_detail.state)
            return CONSUME
        ran = self._runner.run_saved(
            flow_detail, extra_listeners=[claim.watch])
        if ran == ALREADY_RUNNING:
            LOG.info('Flow %s of job %s is being run by this conductor '
                     'already: not run twice; the job is left to its '
                     'claim', flow_uuid, job.uuid)
            return LEAVE
        if ran == FENCED:
            # The runner said why (WARNING); the job is the new owner's.
            LOG.info('Flow %s of job %s was taken over by another run; '
                     'the job is left to its owner', flow_uuid, job.uuid)
            return LEAVE
        if claim.lost:
            LOG.warning('Flow %s of job %s was stopped (%s) because the '
                        'claim was lost; the job is not consumed here',
                        flow_uuid, job.uuid, flow_detail.state)
            return LEAVE
        if flow_detail.state in flow_states.FINISHED_STATES:
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
                self._forget(job)
            elif verdict == TRASH:
                self._try_finish_job(job, False, trash=True)
            # Left: neither abandoned (another conductor would retry at
            # once, in a loop if the cause lasts) nor trashed; the claim
            # runs out.
        finally:
            self._dispatched.discard(fut)
            self._wake.set()

    def _forget(self, job):
        """Take a consumed job out of the board's order (``listings``)."""
        try:
            self._jobboard.listings.forget(job)
        except tf_exc.JobFailure as exc:
            # The next turn that reads it finds it gone.
            LOG.debug('Job %s stays in the order of board %s for now: %s',
                      job.uuid, self._jobboard.name, exc)

    def wait(self, timeout=None):
        done = super().wait(timeout)
        if done:
            self.renewer.stop()
        return done


def start_conductor(runner, board):
    """Run a FlowConductor for ``runner`` in a daemon thread; return it."""
    conductor = FlowConductor(runner, board)
    thread = threading.Thread(target=conductor.run,
                              name=f'jobboard conductor {board.name}',
                              daemon=True)
    thread.start()
    conductor.thread = thread
    return conductor
