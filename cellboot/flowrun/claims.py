"""Claims on jobs that stay ours only while we renew them, checked often.

Why claims expire and how they are renewed and checked: see
``cellboot.flowrun.jobboard``. The owner-checked renewal is one atomic
Redis call (``jobboard.ExpiringRedisJobBoard.renew_claim``), so that a
claim that ran out and went to another conductor is never extended for
the loser; a lost claim suspends the engine that runs its flow.
"""

import contextlib
import threading
import time

from oslo_log import log as logging
from taskflow import exceptions as tf_exc
from taskflow.listeners import base as listener_base
from taskflow import states

LOG = logging.getLogger(__name__)


class Claim:
    """A claim being renewed: is it lost, and the engine to stop if so."""

    def __init__(self, job, renewer, proved_at=None):
        self.job = job
        self.lost_to = None
        # True once the block that held it ended (``renewing``): its job
        # may be consumed already, and nothing runs under it any more.
        self.ended = False
        # time.monotonic() when the last claim or renewal that Redis
        # granted was sent (None: never yet).
        self.proved_at = proved_at
        self._renewer = renewer
        self._lost = threading.Event()
        self._engines = set()
        self._lock = threading.Lock()

    @property
    def lost(self):
        return self._lost.is_set()

    def lose(self, owner):
        """The claim went to ``owner`` (None: nobody): suspend the run.

        In a thread of its own: ``suspend`` waits for the engine's
        storage, which a step in progress may hold, and the renewer must
        go on renewing the other claims meanwhile.
        """
        with self._lock:
            self.lost_to = owner
            self._lost.set()
            engines = list(self._engines)
        for engine_ in engines:
            threading.Thread(target=engine_.suspend, daemon=True,
                             name=f'suspend {self.job.uuid}').start()

    def check(self):
        """Whether the claim is still ours; renewed first unless surely so.

        A claim granted (or renewed) at time T lasts until T plus the
        expiry at the least: nobody else can hold it before, so within
        half the expiry of the last grant the answer is yes, for free
        (the renewer grants again every third of it). Past that (a
        stalled process, a renewer that could not reach Redis), one
        Redis round trip (``ClaimRenewer.renew``). False when it is lost
        (then marked so) and when Redis did not answer.

        A claim that vanishes with its key before it expires (a Redis
        that restarted empty) is thus seen lost at the renewer's next
        turn rather than at the next atom; a conductor that claimed the
        job meanwhile has taken its flow over, which fences this run's
        writes and side effects (``cellboot.flowrun.fencing``).
        """
        if self.lost:
            return False
        if self._renewer.surely_ours(self):
            return True
        return self._renewer.renew(self)

    def watch(self, engine_):
        """A listener for ``engine_``'s run: suspended once it is lost."""
        return _SuspendOnLoss(engine_, self)

    def _attach(self, engine_):
        with self._lock:
            self._engines.add(engine_)

    def _detach(self, engine_):
        with self._lock:
            self._engines.discard(engine_)


class _SuspendOnLoss(listener_base.Listener):
    """Registers an engine with its claim while it runs, and checks it.

    The claim is checked (``Claim.check``) as the flow starts and
    whenever an atom ends, that is right before the engine picks the
    next atom to run: a claim found lost suspends the engine there, in
    its own thread, so that the next atom never starts here. The
    renewer alone would find the loss up to a third of the expiry
    later, while this run went on beside the new holder's. Cost: a
    Redis round trip only for a check more than half the expiry after
    the claim's last grant (a stalled run). A lost claim seen by the renewer
    suspends the engine too (``Claim.lose``); a ``suspend`` before the
    run would be ignored, hence the check as it starts.
    """

    _ATOM_ENDS = (states.SUCCESS, states.FAILURE, states.REVERTED,
                  states.REVERT_FAILURE)

    def __init__(self, engine_, claim):
        super().__init__(engine_, task_listen_for=self._ATOM_ENDS,
                         flow_listen_for=[states.RUNNING],
                         retry_listen_for=self._ATOM_ENDS)
        self._claim = claim

    def register(self):
        super().register()
        self._claim._attach(self._engine)

    def deregister(self):
        self._claim._detach(self._engine)
        super().deregister()

    def _check(self):
        self._claim.check()
        if self._claim.lost:
            self._engine.suspend()

    def _flow_receiver(self, state, details):
        self._check()

    def _task_receiver(self, state, details):
        self._check()

    def _retry_receiver(self, state, details):
        self._check()


class ClaimRenewer:
    """Renews the claims of the jobs being run, every expiry/3 seconds.

    One thread for all the jobs of a conductor. A claim found in another
    conductor's hands, or whose job is gone (this one stalled beyond the
    expiry), is lost: its ``Claim`` suspends the engine running the flow
    (see the module doc). A claim that merely ran out (nobody has it)
    is lost too: the job is free, and whoever claims it next resumes the
    flow; this run stops rather than race it. A failure to reach Redis
    is not a loss: the claim is renewed at the next turn, if still ours.
    """

    def __init__(self, board, who):
        self._board = board
        self._who = who
        self._expiry = board.claim_expiry
        self._claims = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = None

    @contextlib.contextmanager
    def renewing(self, job, proved_at=None):
        """Keep ``job``'s claim alive while the block runs; yield a Claim.

        ``proved_at``: ``time.monotonic()`` when the claim was sent, if
        it is known (see ``Claim.check``).
        """
        claim = Claim(job, self, proved_at)
        with self._lock:
            self._claims.add(claim)
            if self._thread is None:
                self._stopping.clear()
                self._thread = threading.Thread(
                    target=self._run, name=f'claim renewer {self._who}',
                    daemon=True)
                self._thread.start()
        try:
            yield claim
        finally:
            with self._lock:
                claim.ended = True
                self._claims.discard(claim)

    def _run(self):
        while not self._stopping.wait(self._expiry / 3.0):
            with self._lock:
                claims = [claim for claim in self._claims
                          if not claim.lost]
            for claim in claims:
                self.renew(claim)

    def surely_ours(self, claim):
        """Whether ``claim`` was granted less than half an expiry ago."""
        proved_at = claim.proved_at
        return proved_at is not None and \
            time.monotonic() - proved_at < self._expiry / 2.0

    def renew(self, claim):
        """Extend the claim if it is still this conductor's; whether it is.

        One atomic Redis call (``ExpiringRedisJobBoard.renew_claim``). A
        claim found lost is marked so (``Claim.lose``), once. A failure
        to reach Redis returns False without losing the claim.
        """
        job = claim.job
        sent = time.monotonic()
        try:
            renewed, owner = self._board.renew_claim(job, self._who,
                                                     self._expiry)
        except tf_exc.TaskFlowException as exc:
            LOG.warning('Could not renew the claim on job %s: %s', job.uuid,
                        exc)
            return False
        if renewed:
            claim.proved_at = sent
            return True
        with self._lock:
            # A claim whose run ended while Redis was asked (the loop
            # takes its claims, then renews them one by one) is no loss:
            # its job was consumed as its flow succeeded, say.
            if claim.lost or claim.ended:
                return False
            LOG.warning('The claim of %s on job %s (flow %s) is lost (%s): '
                        'the flow is suspended here after its current step '
                        'and the job left to whoever claims it', self._who,
                        job.uuid, (job.details or {}).get('flow_uuid'),
                        f'now held by {owner}' if owner
                        else 'it ran out, or its job is gone')
            claim.lose(owner)
        return False

    def stop(self):
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join()
