"""Stopping a whole deployment while a build is on its host.

A compute host ends a build by calling the scheduler
(``record_build_result``). When the deployment stopped every RPC server
at once, that call found the scheduler gone and waited for its RPC
timeout: a minute before the host, hence all-in-one, could stop. The
scheduler is now stopped after everything that calls it.
"""

import time

from cellboot.conf import CONF
from tests import base
from tests.functional import cluster

# Long enough for the stop to begin while the build is on its host.
SPAWN_SECONDS = 1.5
# Far below the RPC timeout (60 s) that a call to a stopped scheduler
# waited for, and well above a stop's own seconds.
STOP_WITHIN_SECONDS = 20


class StopWithABuildInFlightTest(base.TestCase):

    def setUp(self):
        super().setUp()
        CONF.set_override('spawn_time', SPAWN_SECONDS, group='fake_driver')
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=1))

    def _wait_until_a_host_builds(self):
        host = self.cluster.deployment.cells[0].name + '-host1'
        deadline = time.monotonic() + STOP_WITHIN_SECONDS
        while time.monotonic() < deadline:
            if 'build_and_run_instance' in self.cluster.handled(host):
                return
            time.sleep(0.05)
        self.fail(f'{host} was never asked to build')

    def test_the_build_finishes_and_the_stop_does_not_wait_a_timeout(self):
        (uuid,) = self.cluster.boot()
        self._wait_until_a_host_builds()
        started = time.monotonic()
        self.cluster.deployment.stop()
        took = time.monotonic() - started
        self.assertLess(took, STOP_WITHIN_SECONDS)
        _cell, instance = self.cluster.find(uuid)
        self.assertEqual('active', instance.vm_state)
