"""When checking a claim costs a Redis call, and when it needs none.

A claim granted at T cannot run out before T + expiry, so a check
within half the expiry of the last grant answers without Redis; past
that it renews (and may find the claim lost). A board stand-in counts
the calls: what Redis answers is ``tests/functional/jobboard``'s.
"""

import time
from unittest import mock

from cellboot.flowrun import claims
from tests import base

EXPIRY = 30.0


class _Board:
    claim_expiry = EXPIRY

    def __init__(self, answers):
        self.answers = list(answers)
        self.calls = 0

    def renew_claim(self, job, who, expiry=None):
        self.calls += 1
        return self.answers.pop(0)


class ClaimCheckTest(base.TestCase):

    def _claim(self, answers, proved_ago=None):
        board = _Board(answers)
        renewer = claims.ClaimRenewer(board, 'me')
        proved_at = None
        if proved_ago is not None:
            proved_at = time.monotonic() - proved_ago
        job = mock.Mock(uuid='job', details={'flow_uuid': 'flow'})
        return board, claims.Claim(job, renewer, proved_at)

    def test_a_claim_granted_just_now_is_ours_without_a_call(self):
        board, claim = self._claim([], proved_ago=1.0)
        for _ in range(5):
            self.assertTrue(claim.check())
        self.assertEqual(0, board.calls)

    def test_past_half_the_expiry_the_check_renews(self):
        board, claim = self._claim([(True, 'me')],
                                   proved_ago=EXPIRY / 2 + 1)
        self.assertTrue(claim.check())
        self.assertEqual(1, board.calls)
        # The renewal is a grant: the next checks are free again.
        self.assertTrue(claim.check())
        self.assertEqual(1, board.calls)

    def test_a_claim_never_granted_here_is_renewed(self):
        board, claim = self._claim([(True, 'me')])
        self.assertTrue(claim.check())
        self.assertEqual(1, board.calls)

    def test_a_claim_found_in_other_hands_is_lost_for_good(self):
        board, claim = self._claim([(False, 'other')], proved_ago=EXPIRY)
        self.assertFalse(claim.check())
        self.assertTrue(claim.lost)
        self.assertEqual('other', claim.lost_to)
        self.assertFalse(claim.check())
        self.assertEqual(1, board.calls)

    def test_a_refused_renewal_does_not_count_as_a_grant(self):
        board, claim = self._claim([(False, None)], proved_ago=EXPIRY)
        self.assertFalse(claim.check())
        self.assertIsNotNone(claim.proved_at)
        self.assertLess(claim.proved_at, time.monotonic() - EXPIRY / 2)


class RenewerTurnTest(base.TestCase):
    """The renewer's loop takes its claims, then renews them one by one:
    a run may end between the two."""

    def setUp(self):
        super().setUp()
        self.board = _Board([(False, None)])
        self.renewer = claims.ClaimRenewer(self.board, 'me')
        self.addCleanup(self.renewer.stop)
        self.job = mock.Mock(uuid='job', details={'flow_uuid': 'flow'})

    def test_a_claim_whose_run_ended_meanwhile_is_no_loss(self):
        with self.renewer.renewing(self.job) as claim:
            taken = [claim]
        # The job was consumed as the run ended: Redis has no claim.
        with self.assertNoLogs(claims.LOG.logger, 'WARNING'):
            for claim in taken:
                self.assertFalse(self.renewer.renew(claim))
        self.assertEqual(1, self.board.calls)
        self.assertFalse(claim.lost)

    def test_a_claim_still_running_that_ran_out_is_lost(self):
        with self.renewer.renewing(self.job) as claim:
            with self.assertLogs(claims.LOG.logger, 'WARNING'):
                self.assertFalse(self.renewer.renew(claim))
            self.assertTrue(claim.lost)
            self.assertIsNone(claim.lost_to)
