"""A multi-create's casts are sent several at once, each failure its own."""

import threading

from oslo_context import context as oslo_context

from cellboot import context as cb_context
from cellboot.rpc import fanout
from tests import base


class SendEachTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.context = cb_context.get_admin_context()

    def test_casts_overlap_up_to_the_width(self):
        # Every send waits until `width` of them are in flight together:
        # sent one after the other, the first would wait for ever (the
        # barrier's timeout breaks it and the test fails).
        width = 4
        barrier = threading.Barrier(width, timeout=10)
        outcomes = fanout.send_each(self.context,
                                    lambda item: barrier.wait(),
                                    range(width * 3), width=width)
        self.assertEqual(dict.fromkeys(range(width * 3)), outcomes)

    def test_a_failed_cast_is_that_item_s_alone(self):
        def send(item):
            if item % 3 == 0:
                raise RuntimeError(f'broker gone for {item}')

        outcomes = fanout.send_each(self.context, send, range(7))
        self.assertEqual([0, 3, 6], sorted(
            item for item, exc in outcomes.items() if exc is not None))
        self.assertEqual('broker gone for 3', str(outcomes[3]))
        self.assertIsNone(outcomes[4])

    def test_a_failed_check_stops_the_sending(self):
        sent = []
        checks = []

        def check():
            checks.append(True)
            if len(checks) > 5:
                raise RuntimeError('fenced out')

        self.assertRaisesRegex(
            RuntimeError, 'fenced out', fanout.send_each, self.context,
            sent.append, range(100), before_each=check, width=1)
        self.assertEqual(list(range(5)), sent)

    def test_a_failed_check_lets_only_the_casts_in_flight_through(self):
        width = 4
        sent = []
        checks = []
        lock = threading.Lock()

        def check():
            with lock:
                checks.append(True)
                if len(checks) > 10:
                    raise RuntimeError('fenced out')

        self.assertRaisesRegex(
            RuntimeError, 'fenced out', fanout.send_each, self.context,
            sent.append, range(100), before_each=check, width=width)
        self.assertEqual(10, len(sent))
        self.assertLessEqual(len(checks), 10 + width)

    def test_every_cast_is_checked_first(self):
        checked = []
        lock = threading.Lock()

        def check():
            with lock:
                checked.append(threading.current_thread())

        def send(item):
            with lock:
                self.assertIn(threading.current_thread(), checked)

        outcomes = fanout.send_each(self.context, send, range(30),
                                    before_each=check)
        self.assertEqual(dict.fromkeys(range(30)), outcomes)
        self.assertEqual(30, len(checked))

    def test_the_senders_have_the_request_context(self):
        seen = set()
        fanout.send_each(
            self.context,
            lambda item: seen.add(oslo_context.get_current().request_id),
            range(20))
        self.assertEqual({self.context.request_id}, seen)

    def test_one_cast_is_sent_from_the_caller_s_thread(self):
        threads = []
        checks = []
        outcomes = fanout.send_each(
            self.context, lambda item: threads.append(
                threading.current_thread()),
            ['only'], before_each=lambda: checks.append(True))
        self.assertEqual({'only': None}, outcomes)
        self.assertEqual([threading.current_thread()], threads)
        self.assertEqual([True], checks)

    def test_nothing_to_send_sends_nothing(self):
        self.assertEqual({}, fanout.send_each(
            self.context, self.fail, [], before_each=self.fail))
