"""The schedulers' background loop: a failing step does not end it."""

import threading
import time

from cellboot.scheduler import periodic
from tests import base as test_base

# Seconds between steps here, and how long a test waits for them.
INTERVAL = 0.01
WAIT = 10


class PeriodicTest(test_base.TestCase):

    def _loop(self, steps_before_stop, fail_at=()):
        ran, failures = [], []
        done = threading.Event()

        def step():
            ran.append(len(ran))
            if len(ran) >= steps_before_stop:
                done.set()
            if len(ran) in fail_at:
                raise RuntimeError(f'step {len(ran)}')

        loop = periodic.Periodic(
            'test-loop', step,
            lambda exc, interval: failures.append((str(exc), interval)))
        self.addCleanup(loop.stop)
        return loop, ran, failures, done

    def test_a_failing_step_is_reported_and_the_next_runs(self):
        loop, ran, failures, done = self._loop(4, fail_at=(1, 2))
        loop.start(INTERVAL)
        self.assertTrue(done.wait(WAIT))
        loop.stop()
        self.assertGreaterEqual(len(ran), 4)
        self.assertEqual([('step 1', INTERVAL), ('step 2', INTERVAL)],
                         failures)

    def test_no_interval_starts_nothing(self):
        loop, ran, _failures, done = self._loop(1)
        loop.start(0)
        loop.start(None)
        self.assertFalse(done.wait(0.2))
        self.assertEqual([], ran)

    def test_stop_ends_the_thread_and_a_second_start_is_one_loop(self):
        loop, ran, _failures, done = self._loop(2)
        loop.start(INTERVAL)
        loop.start(INTERVAL)
        self.assertTrue(done.wait(WAIT))
        loop.stop()
        count = len(ran)
        self.assertFalse(any(thread.name == 'test-loop'
                             for thread in threading.enumerate()))
        time.sleep(INTERVAL * 5)  # steps a live loop would have run
        self.assertEqual(count, len(ran))
