"""What becomes of a build its compute host never took.

``untaken_builds.decide``: a live host gets the build again, at most
``[conductor] build_recasts`` times; a dead host's build goes to the
alternates; a live host that never takes it leaves it to the build
timeout (ERROR). ``is_untaken`` says which builds the check may touch.
"""

from cellboot.conductor import untaken_builds
from cellboot.objects import instance as instance_obj
from tests import base


def _instance(host='h1', task_state=None):
    return instance_obj.Instance(uuid='u', host=host, task_state=task_state,
                                 vm_state='building')


class DecideTest(base.TestCase):

    def test_a_live_host_gets_the_build_again(self):
        self.assertEqual(untaken_builds.RECAST,
                         untaken_builds.decide(True, 0, 3))
        self.assertEqual(untaken_builds.RECAST,
                         untaken_builds.decide(True, 2, 3))

    def test_a_live_host_that_never_takes_it_leaves_it_to_the_timeout(self):
        self.assertEqual(untaken_builds.WAIT,
                         untaken_builds.decide(True, 3, 3))
        # An operator who allows no re-send.
        self.assertEqual(untaken_builds.WAIT,
                         untaken_builds.decide(True, 0, 0))

    def test_a_dead_hosts_build_is_rescheduled(self):
        for recasts in (0, 3, 10):
            self.assertEqual(untaken_builds.RESCHEDULE,
                             untaken_builds.decide(False, recasts, 3))

    def test_a_count_beyond_the_bound_is_no_licence(self):
        # A count written by hand (or by a compromised cell) above the
        # bound re-sends nothing more.
        self.assertEqual(untaken_builds.WAIT,
                         untaken_builds.decide(True, 2 ** 31, 3))


class IsUntakenTest(base.TestCase):

    def test_untaken_on_a_host(self):
        self.assertTrue(untaken_builds.is_untaken(_instance()))

    def test_one_being_moved_off_its_host_is_still_untaken(self):
        self.assertTrue(untaken_builds.is_untaken(_instance(
            task_state=instance_obj.task_states.RESCHEDULING)))

    def test_a_build_a_host_took_is_not(self):
        self.assertFalse(untaken_builds.is_untaken(_instance(
            task_state=instance_obj.task_states.SPAWNING)))

    def test_a_build_without_a_host_is_not(self):
        # Left to the build timeout: nobody to send it to.
        self.assertFalse(untaken_builds.is_untaken(_instance(host=None)))
