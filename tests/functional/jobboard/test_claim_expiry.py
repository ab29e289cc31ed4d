"""A job its conductor left to its claim's expiry is free once it ran out.

A conductor leaves a job claimed when its flow could not be loaded or
did not end (``cellboot.flowrun.conductor``), and its loop tries to
claim every job of the board at each turn. Those tries must not extend
the claim it left, or the job is never run again while that conductor
lives (with one conductor per cell: never). Real Redis.
"""

import time
import uuid

from taskflow import exceptions as tf_exc

from cellboot.flowrun import jobboard
from tests import base
from tests import fixtures as cb_fixtures

EXPIRY = 1.0
OWNER = 'cell1-conductor:1'


class ClaimExpiryTest(base.TestCase):

    def setUp(self):
        super().setUp()
        redis = self.useFixture(cb_fixtures.Redis())
        self.flags(url=redis.url, namespace=redis.namespace,
                   claim_expiry=EXPIRY, group='jobboard')
        self.board = jobboard.connect('reschedule', 'sqlite://',
                                      cell_name='cell1')
        self.addCleanup(self.board.close)
        self.job = jobboard.post(self.board, 'reschedule', str(uuid.uuid4()))

    def test_claiming_a_job_held_already_neither_succeeds_nor_extends(self):
        self.board.claim(self.job, OWNER)
        # The conductor's loop tries again and again while the claim
        # runs out: each try is refused, none extends it.
        deadline = time.monotonic() + 3 * EXPIRY
        while self.board.holder(self.job) is not None:
            self.assertLess(time.monotonic(), deadline,
                            'the claim was extended by its own holder')
            self.assertRaises(tf_exc.UnclaimableJob, self.board.claim,
                              self.job, OWNER)
            time.sleep(EXPIRY / 5)
        self.board.claim(self.job, OWNER)
        self.assertEqual(OWNER, self.board.holder(self.job))

    def test_another_owner_is_refused_while_the_claim_lasts(self):
        self.board.claim(self.job, OWNER)
        self.assertRaises(tf_exc.UnclaimableJob, self.board.claim,
                          self.job, 'cell1-conductor:2')
        self.assertEqual(OWNER, self.board.holder(self.job))
