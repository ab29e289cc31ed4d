"""A build cast that RabbitMQ really lost is sent again, not failed.

Services in processes on MariaDB and RabbitMQ (``deployment``): one cell,
``cell1-host1`` (the scheduler's first choice: it has the most memory)
and ``cell1-host2``. host1 is SIGKILLed before a boot; the boot's
``build_and_run_instance`` waits in host1's durable queue, and the test
removes it for real (``rabbitmqctl purge_queue``), which is what a
broker restart did to non-durable queues. Then:

* host1 comes back: the cell conductor's check of untaken builds sends
  the build again to the live host, which builds it;
* host1 stays dead: its compute service goes down and the check
  reschedules the build to host2, the alternate the boot flow stored.

Never a restart of the broker itself: that is ``make faults``'s.
"""

import subprocess
import time

from tests import base
from tests.functional import invariants
from tests.functional.multiprocess import deployment
from tests.functional.multiprocess import rabbit

HOST, ALTERNATE = 'cell1-host1', 'cell1-host2'
QUEUE = f'cellboot-compute.cell1.{HOST}'
NOT_TAKEN = 8
# How long a test waits for the boot to reach host1's queue.
QUEUED_TIMEOUT = 30


def _rabbitmqctl(*args):
    return subprocess.run(['rabbitmqctl', '-q', *args], capture_output=True,
                          text=True, check=True,
                          timeout=rabbit.RABBITMQCTL_TIMEOUT).stdout


class _LostCastTests:

    SERVICE_DOWN_TIME = 60

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(deployment.Deployment(
            self, backend=self.BACKEND,
            cells={'cell1': [HOST, ALTERNATE]},
            host_options={HOST: '[compute]\nmemory_mb = 65536\n'},
            options=f"""
                [conductor]
                build_not_taken_timeout = {NOT_TAKEN}
                sweep_interval = 1

                [scheduler]
                service_down_time = {self.SERVICE_DOWN_TIME}
                """))
        self.vhost = self.cluster.cell_transport_urls['cell1'].rsplit(
            '/', 1)[1]

    def _queued(self):
        out = _rabbitmqctl('list_queues', '-p', self.vhost,
                           '--no-table-headers', 'name', 'messages')
        for line in out.splitlines():
            name, _sep, count = line.partition('\t')
            if name == QUEUE:
                return int(count)
        return 0

    def _boot_and_lose_the_cast(self):
        """Boot with host1 dead; purge its queue; the instance uuid."""
        self.cluster.kill(HOST)
        (uuid,) = self.cluster.boot()
        deadline = time.monotonic() + QUEUED_TIMEOUT
        while not self._queued():
            self.assertLess(time.monotonic(), deadline,
                            f'the build never reached {QUEUE}')
            time.sleep(0.2)
        _rabbitmqctl('purge_queue', '-p', self.vhost, QUEUE)
        _cell, instance = self.cluster.instance(uuid)
        self.assertEqual(('building', None, HOST),
                         (instance.vm_state, instance.task_state,
                          instance.host))
        return uuid


class MariaDBRabbitRecastTest(_LostCastTests, base.MySQLMixin,
                              base.TestCase):

    def test_a_lost_build_goes_active_on_its_host_once_sent_again(self):
        uuid = self._boot_and_lose_the_cast()
        self.cluster.restart(HOST)
        self.cluster.wait_settled([uuid])
        _cell, instance = self.cluster.instance(uuid)
        self.assertEqual(('active', HOST),
                         (instance.vm_state, instance.host))
        self.assertGreaterEqual(instance.build_recasts, 1)
        self.assertIn('Re-sent to host', self.cluster.service(
            'conductor-cell1').log())
        self.assertEqual([], invariants.check_invariants())


class MariaDBRabbitRescheduleTest(_LostCastTests, base.MySQLMixin,
                                  base.TestCase):

    # host1 counts as down this long after its last heartbeat (it
    # heartbeats every second), which the boot must beat.
    SERVICE_DOWN_TIME = 6

    def test_a_lost_build_of_a_dead_host_goes_active_on_the_alternate(self):
        uuid = self._boot_and_lose_the_cast()
        self.cluster.wait_settled([uuid])
        _cell, instance = self.cluster.instance(uuid)
        self.assertEqual(('active', ALTERNATE),
                         (instance.vm_state, instance.host))
        self.assertIn('rescheduling it', self.cluster.service(
            'conductor-cell1').log())
        self.assertEqual([], invariants.check_invariants())
