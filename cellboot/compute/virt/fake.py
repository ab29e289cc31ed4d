"""The fake virt driver: builds nothing, fails when told to.

It reports the capacity of ``[compute]`` and keeps its "servers" in
memory. ``[fake_driver]`` makes builds take time (``spawn_time``) and
fail on purpose (``fail_hosts``, ``fail_rate``, ``fail_mode``), which is
how the tests, the demos and the benchmarks drive the reschedule and
error paths of the boot workflow without a hypervisor. Options are read
at each build, so a test can change them while a host runs.
"""

import random
import threading
import time

from cellboot.conf import CONF
from cellboot.conf import fake_driver as fake_driver_conf
from cellboot.compute.virt import driver
from cellboot import exception


class FakeDriver(driver.ComputeDriver):
    """A hypervisor that exists only in this process's memory."""

    def __init__(self, host):
        super().__init__(host)
        self._lock = threading.Lock()
        self._instances = {}
        self._random = random.Random()

    def get_available_resource(self):
        return {'hypervisor_hostname': self.host,
                'vcpus': CONF.compute.vcpus,
                'memory_mb': CONF.compute.memory_mb,
                'local_gb': CONF.compute.local_gb}

    def spawn(self, context, instance, flavor):
        """Sleep ``spawn_time``, then fail or record the server."""
        opts = CONF.fake_driver
        if opts.spawn_time:
            time.sleep(opts.spawn_time)
        reason = self._failure_reason(opts)
        if reason is not None:
            error = (exception.BuildAbortedFailure
                     if opts.fail_mode == fake_driver_conf.ABORT
                     else exception.RescheduledBuildFailure)
            raise error(uuid=instance.uuid, host=self.host, reason=reason)
        with self._lock:
            self._instances[instance.uuid] = dict(flavor or {})

    def _failure_reason(self, opts):
        if self.host in opts.fail_hosts:
            return (f'the fake driver fails every build on {self.host} '
                    f'([fake_driver] fail_hosts)')
        with self._lock:
            unlucky = self._random.random() < opts.fail_rate
        if unlucky:
            return (f'the fake driver failed this build at random '
                    f'([fake_driver] fail_rate = {opts.fail_rate})')
        return None

    def destroy(self, context, instance):
        with self._lock:
            self._instances.pop(instance.uuid, None)

    def list_instances(self):
        with self._lock:
            return sorted(self._instances)
