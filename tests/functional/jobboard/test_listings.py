"""What the conductor's loop reads of a board, and how it takes jobs.

``listings.Listings`` lists the jobs nobody holds, oldest first, as far
as the free slots go, decoding each posting once; postings others wrote
that do not decode are skipped. ``conductor.FlowConductor``'s loop
takes a turn when a flow ends or a job is posted in its process, not
only every ``WAIT_TIMEOUT``. Real Redis; the flows' dispatch is
replaced (what a dispatch does is ``test_shared_board``'s business).
"""

import threading
import time
import uuid

import fixtures

from taskflow import exceptions as tf_exc
from taskflow.jobs.backends import impl_redis

from cellboot.flowrun import conductor as flow_conductor
from cellboot.flowrun import jobboard
from cellboot.flowrun import kinds
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional.compute import base as compute_base

OWNER = 'conductor:1'
TIMEOUT = 10


class _Runner:
    """What FlowConductor asks of its runner, and nothing more."""

    kind = kinds.KIND_BOOT
    level = kinds.SUPER
    owner = OWNER

    @staticmethod
    def persistence():
        return 'sqlite://'


class _BoardTest(base.TestCase):
    """The boot board on the local Redis, in a namespace of its own."""

    def setUp(self):
        super().setUp()
        redis = self.useFixture(cb_fixtures.Redis())
        self.flags(url=redis.url, namespace=redis.namespace,
                   claim_expiry=30, group='jobboard')
        self.board = jobboard.connect(kinds.KIND_BOOT, 'sqlite://')
        self.addCleanup(self.board.close)


class ListingsTest(_BoardTest):

    def _post(self, count):
        return [jobboard.post(self.board, kinds.KIND_BOOT, str(uuid.uuid4()))
                for _ in range(count)]

    def _plant(self, key, raw):
        self.board._client.hset(self.board.listings_key, key, raw)

    def test_free_jobs_oldest_first_as_far_as_asked(self):
        jobs = self._post(5)
        self.board.claim(jobs[0], 'another')
        self.board.claim(jobs[2], OWNER)
        free = self.board.listings.unclaimed(2, batch=2)
        self.assertEqual([jobs[1].uuid, jobs[3].uuid],
                         [job.uuid for job in free])
        self.assertEqual([jobs[1].uuid, jobs[3].uuid, jobs[4].uuid],
                         [job.uuid for job in
                          self.board.listings.unclaimed(10)])
        self.assertEqual([], self.board.listings.unclaimed(0))

    def test_postings_are_decoded_once(self):
        self._post(3)
        decoded = []
        real_loads = self.board._loads

        def counting_loads(blob, *args, **kwargs):
            decoded.append(blob)
            return real_loads(blob, *args, **kwargs)

        self.board._loads = counting_loads
        first = self.board.listings.jobs()
        self.assertEqual(3, len(decoded))
        self._post(1)
        second = self.board.listings.jobs()
        self.assertEqual(4, len(decoded))   # only the new one
        self.assertEqual([id(job) for job in first],
                         [id(job) for job in second[:3]])

    def test_postings_that_do_not_decode_are_skipped(self):
        real = self._post(1)[0]
        self._plant(b'garbage', b'\xc1 not msgpack')
        self._plant(b'not-a-mapping', self.board._dumps(['a', 'list']))
        self._plant(b'no-fields', self.board._dumps({'uuid': 'x'}))
        planted = {'uuid': 'y', 'name': 'n', 'created_on': 'c',
                   'details': {}, 'priority': 'NORMAL'}
        self._plant(b'string-sequence', self.board._dumps(
            dict(planted, sequence='1; a string')))
        self._plant(b'bad-priority', self.board._dumps(
            dict(planted, sequence=2, priority='URGENT')))
        with self.assertLogs('cellboot.flowrun.listings', 'WARNING') as logs:
            free = self.board.listings.unclaimed(10)
        self.assertEqual([real.uuid], [job.uuid for job in free])
        self.assertEqual(5, len(logs.output))
        # Once per posting: the next turns say nothing more of them.
        with self.assertNoLogs('cellboot.flowrun.listings', 'WARNING'):
            self.board.listings.unclaimed(10)

    def test_jobs_posted_outside_the_order_are_ordered_on_reading(self):
        ours = self._post(1)[0]
        # As TaskFlow's own post (an earlier cellboot) writes it.
        theirs = impl_redis.RedisJobBoard.post(
            self.board, 'earlier', details={'flow_uuid': 'x'})
        self.assertEqual(
            [ours.uuid, theirs.uuid],
            [job.uuid for job in self.board.listings.unclaimed(5)])
        self.assertEqual(2, self.board._client.zcard(
            self.board.listings.order_key))

    def test_jobs_gone_leave_the_order(self):
        jobs = self._post(3)
        self.board.claim(jobs[1], OWNER)
        self.board.consume(jobs[1], OWNER)
        self.assertEqual([jobs[0].uuid, jobs[2].uuid],
                         [job.uuid for job in
                          self.board.listings.unclaimed(5)])
        self.assertEqual(
            [jobs[0].key, jobs[2].key],
            self.board._client.zrange(self.board.listings.order_key, 0, -1))

    def test_a_job_found_held_is_not_asked_about_for_a_while(self):
        self.useFixture(fixtures.MonkeyPatch(
            'cellboot.flowrun.listings.HELD_RECHECK_SECONDS', 0.5))
        jobs = self._post(2)
        self.board.claim(jobs[0], 'another')
        listings = self.board.listings
        self.assertEqual([jobs[1].uuid],
                         [job.uuid for job in listings.unclaimed(5)])
        # Its holder died; its claim ran out (here: at once).
        self.board._client.delete(jobs[0].owner_key)
        self.assertEqual([jobs[1].uuid],
                         [job.uuid for job in listings.unclaimed(5)])
        time.sleep(0.6)
        self.assertEqual([jobs[0].uuid, jobs[1].uuid],
                         [job.uuid for job in listings.unclaimed(5)])

    def test_a_job_consumed_here_leaves_the_order_at_once(self):
        jobs = self._post(2)
        self.board.claim(jobs[0], OWNER)
        self.board.consume(jobs[0], OWNER)
        self.board.listings.forget(jobs[0])
        self.assertEqual(
            [jobs[1].key],
            self.board._client.zrange(self.board.listings.order_key, 0, -1))

    def test_a_job_claimed_meanwhile_is_refused_to_claim_free(self):
        job = self._post(1)[0]
        free = self.board.listings.unclaimed(1)
        self.board.claim(job, 'another')
        self.assertRaises(tf_exc.UnclaimableJob, self.board.claim_free,
                          free[0], OWNER)
        self.assertEqual('another', self.board.holder(job))


class LoopTest(_BoardTest):
    """The loop's turns, with a wait far longer than the test's bound."""

    def setUp(self):
        super().setUp()
        self.ran = []
        self.all_ran = threading.Event()

    def _start(self, slots, expected):
        self.flags(max_simultaneous_jobs=slots, group='jobboard')
        conductor = flow_conductor.FlowConductor(_Runner(), self.board)
        # A turn every minute at most unless woken: a test that waited
        # for it would fail on TIMEOUT.
        conductor.WAIT_TIMEOUT = 60

        def dispatch(job):
            self.ran.append(job.uuid)
            if len(self.ran) == expected:
                self.all_ran.set()
            return flow_conductor.CONSUME

        conductor._dispatch_job = dispatch
        thread = threading.Thread(target=conductor.run, daemon=True)
        thread.start()

        def stop():
            conductor.stop()
            thread.join(TIMEOUT)
        self.addCleanup(stop)
        return conductor

    def test_a_freed_slot_takes_the_next_job_at_once(self):
        jobs = [jobboard.post(self.board, kinds.KIND_BOOT, str(uuid.uuid4()))
                for _ in range(4)]
        self._start(slots=1, expected=4)
        self.assertTrue(self.all_ran.wait(TIMEOUT), self.ran)
        self.assertEqual([job.uuid for job in jobs], self.ran)
        self.assertEqual([], list(self.board.iterjobs()))   # consumed

    def test_a_job_posted_here_is_taken_when_woken(self):
        first = jobboard.post(self.board, kinds.KIND_BOOT,
                              str(uuid.uuid4()))
        conductor = self._start(slots=2, expected=2)
        self.assertTrue(compute_base.wait_for(
            lambda: self.ran == [first.uuid], TIMEOUT), self.ran)
        # The turn after that job found nothing more: the loop sleeps
        # its minute, unless woken.
        job = jobboard.post(self.board, kinds.KIND_BOOT, str(uuid.uuid4()))
        conductor.wake()
        self.assertTrue(self.all_ran.wait(TIMEOUT), self.ran)
        self.assertEqual([first.uuid, job.uuid], self.ran)

    def test_a_job_handed_to_wake_is_claimed_without_reading_the_board(self):
        first = jobboard.post(self.board, kinds.KIND_BOOT,
                              str(uuid.uuid4()))
        conductor = self._start(slots=2, expected=3)
        self.assertTrue(compute_base.wait_for(
            lambda: self.ran == [first.uuid], TIMEOUT), self.ran)
        readings = []
        unclaimed = self.board.listings.unclaimed

        def counted(*args, **kwargs):
            readings.append(args)
            return unclaimed(*args, **kwargs)

        self.board.listings.unclaimed = counted
        posted = [jobboard.post(self.board, kinds.KIND_BOOT,
                                str(uuid.uuid4())) for _ in range(2)]
        for job in posted:
            conductor.wake(job)
        self.assertTrue(self.all_ran.wait(TIMEOUT), self.ran)
        # Two slots: the two run at once, in either order.
        self.assertEqual(first.uuid, self.ran[0])
        self.assertCountEqual([job.uuid for job in posted], self.ran[1:])
        self.assertEqual([], readings)
        # Consumed once each run returned.
        self.assertTrue(compute_base.wait_for(
            lambda: not list(self.board.iterjobs()), TIMEOUT))

    def test_a_job_handed_to_wake_that_another_took_is_not_run_here(self):
        conductor = self._start(slots=2, expected=1)
        self.assertTrue(compute_base.wait_for(
            lambda: not conductor._board_due, TIMEOUT))
        taken = jobboard.post(self.board, kinds.KIND_BOOT, str(uuid.uuid4()))
        self.board.claim(taken, 'another')
        mine = jobboard.post(self.board, kinds.KIND_BOOT, str(uuid.uuid4()))
        conductor.wake(taken)
        conductor.wake(mine)
        self.assertTrue(self.all_ran.wait(TIMEOUT), self.ran)
        self.assertEqual([mine.uuid], self.ran)
        self.assertEqual('another', self.board.holder(taken))
