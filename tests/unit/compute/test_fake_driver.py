"""The fake virt driver: capacity from [compute], failures on request."""

import time

from oslo_utils import uuidutils

from cellboot.compute.virt import fake
from cellboot import exception
from cellboot.objects import instance as instance_obj
from tests import base

FLAVOR = {'vcpus': 1, 'memory_mb': 256, 'root_gb': 1}


def _instance():
    return instance_obj.Instance(uuid=uuidutils.generate_uuid())


class FakeDriverTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.driver = fake.FakeDriver('h1')

    def test_capacity_comes_from_the_compute_group(self):
        self.flags(vcpus=3, memory_mb=1024, local_gb=7, group='compute')
        self.assertEqual(
            {'hypervisor_hostname': 'h1', 'vcpus': 3, 'memory_mb': 1024,
             'local_gb': 7},
            self.driver.get_available_resource())

    def test_spawn_records_the_instance(self):
        instance = _instance()
        self.driver.spawn(None, instance, FLAVOR)
        self.assertEqual([instance.uuid], self.driver.list_instances())

    def test_destroy_removes_the_instance(self):
        instance = _instance()
        self.driver.spawn(None, instance, FLAVOR)
        self.driver.destroy(None, instance)
        self.assertEqual([], self.driver.list_instances())

    def test_destroy_of_an_unknown_instance_is_a_no_op(self):
        self.driver.destroy(None, _instance())
        self.assertEqual([], self.driver.list_instances())

    def test_spawn_takes_spawn_time(self):
        self.flags(spawn_time=0.2, group='fake_driver')
        started = time.monotonic()
        self.driver.spawn(None, _instance(), FLAVOR)
        self.assertGreaterEqual(time.monotonic() - started, 0.2)

    def test_failing_host_raises_a_reschedulable_failure_by_default(self):
        self.flags(fail_hosts=['h1'], group='fake_driver')
        self.assertRaises(exception.RescheduledBuildFailure,
                          self.driver.spawn, None, _instance(), FLAVOR)

    def test_failing_host_in_abort_mode_aborts_the_build(self):
        self.flags(fail_hosts=['h1'], fail_mode='abort', group='fake_driver')
        self.assertRaises(exception.BuildAbortedFailure,
                          self.driver.spawn, None, _instance(), FLAVOR)

    def test_failure_message_names_instance_host_and_option(self):
        self.flags(fail_hosts=['h1'], group='fake_driver')
        instance = _instance()
        exc = self.assertRaises(exception.RescheduledBuildFailure,
                                self.driver.spawn, None, instance, FLAVOR)
        self.assertEqual(
            f'Build of instance {instance.uuid} on host h1 failed: the fake '
            f'driver fails every build on h1 ([fake_driver] fail_hosts)',
            str(exc))

    def test_other_hosts_do_not_fail(self):
        self.flags(fail_hosts=['h2'], group='fake_driver')
        instance = _instance()
        self.driver.spawn(None, instance, FLAVOR)
        self.assertEqual([instance.uuid], self.driver.list_instances())

    def test_failed_build_leaves_nothing_on_the_host(self):
        self.flags(fail_hosts=['h1'], group='fake_driver')
        self.assertRaises(exception.RescheduledBuildFailure,
                          self.driver.spawn, None, _instance(), FLAVOR)
        self.assertEqual([], self.driver.list_instances())

    def test_fail_rate_one_fails_every_build(self):
        self.flags(fail_rate=1.0, group='fake_driver')
        failures = 0
        for _ in range(20):
            try:
                self.driver.spawn(None, _instance(), FLAVOR)
            except exception.RescheduledBuildFailure:
                failures += 1
        self.assertEqual(20, failures)

    def test_fail_rate_half_fails_some_builds_and_not_others(self):
        self.flags(fail_rate=0.5, group='fake_driver')
        failures = 0
        for _ in range(200):
            try:
                self.driver.spawn(None, _instance(), FLAVOR)
            except exception.RescheduledBuildFailure:
                failures += 1
        # P(outside 40..160) for Binomial(200, 0.5) is below 1e-17.
        self.assertTrue(40 < failures < 160, failures)

    def test_fail_mode_accepts_only_reschedule_or_abort(self):
        self.assertRaises(ValueError, self.flags, fail_mode='explode',
                          group='fake_driver')
