"""next_retry: the retry state a failed host passes to its conductor."""

from cellboot.objects import build_args
from tests import base


class NextRetryTest(base.TestCase):

    def test_first_failure_is_one_attempt_on_this_host(self):
        self.assertEqual(
            {'num_attempts': 1, 'hosts': [['h1', 'n1']],
             'last_failure': 'boom'},
            build_args.next_retry(None, 'h1', 'n1', 'boom'))

    def test_later_failure_adds_to_the_earlier_attempts(self):
        retry = {'num_attempts': 2, 'hosts': [['h1', 'n1'], ['h2', 'n2']],
                 'last_failure': 'old'}
        self.assertEqual(
            {'num_attempts': 3,
             'hosts': [['h1', 'n1'], ['h2', 'n2'], ['h3', 'n3']],
             'last_failure': 'new'},
            build_args.next_retry(retry, 'h3', 'n3', 'new'))

    def test_the_given_retry_state_is_not_changed(self):
        retry = {'num_attempts': 1, 'hosts': [['h1', 'n1']],
                 'last_failure': 'old'}
        build_args.next_retry(retry, 'h2', 'n2', 'new')
        self.assertEqual({'num_attempts': 1, 'hosts': [['h1', 'n1']],
                          'last_failure': 'old'}, retry)

    def test_hosts_sent_as_tuples_come_back_as_lists(self):
        retry = {'num_attempts': 1, 'hosts': [('h1', 'n1')]}
        after = build_args.next_retry(retry, 'h2', 'n2', 'x')
        self.assertEqual([['h1', 'n1'], ['h2', 'n2']], after['hosts'])

    def test_a_host_counted_last_already_is_not_counted_again(self):
        # A build its host handed back, rescheduled by a sweep from the
        # retry state the host stored (which counts it).
        retry = {'num_attempts': 2, 'hosts': [['h1', 'n1'], ['h2', 'n2']],
                 'last_failure': 'spawn failed on h2'}
        self.assertEqual(retry, build_args.next_retry(retry, 'h2', 'n2',
                                                      'not started'))

    def test_a_host_tried_earlier_but_not_last_is_counted(self):
        retry = {'num_attempts': 1, 'hosts': [['h1', 'n1']]}
        self.assertEqual(2, build_args.next_retry(retry, 'h1', 'n2',
                                                  'x')['num_attempts'])
