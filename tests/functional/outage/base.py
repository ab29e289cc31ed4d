"""A deployment whose databases a test can cut, and the checks after.

``OutageTestCase`` runs a ``Cluster`` on MariaDB (or PostgreSQL) with
the databases it names (``CUT``) behind TCP proxies of the test
(``tests.functional.tcp_proxy``): ``cut()`` makes them unreachable the
way a restarting server is (new connections refused, open ones
dropped), ``restore_after(seconds)`` brings them back from a timer
thread while the deployment goes on. Nothing is mocked: the services,
their databases and their flows are real.
"""

import logging
import threading
import time

import fixtures
from sqlalchemy.engine import url as sa_url
from taskflow.listeners import base as listener_base
from taskflow import states

from cellboot.db import outage
from cellboot.objects import instance as instance_obj
from tests import base
from tests.functional import cluster
from tests.functional import invariants
from tests.functional import tcp_proxy

# How long the test's outages last: a database restart, well inside the
# default [database] outage_retry_seconds (30 s).
OUTAGE_SECONDS = 3.0

_PORTS = {'mysql': 3306, 'postgresql': 5432}


class OnAtom(listener_base.Listener):
    """A flow listener: ``act()`` once, when ``atom`` reaches ``state``.

    It runs in the engine's thread: with ``RUNNING`` the atom's execute
    comes right after; with ``SUCCESS`` the engine's next flush (before
    the next atom starts) does.
    """

    def __init__(self, engine, atom, act, state=states.RUNNING):
        super().__init__(engine, task_listen_for=[state],
                         flow_listen_for=[], retry_listen_for=[])
        self.atom = atom
        self.act = act

    def _task_receiver(self, state, details):
        if details['task_name'] == self.atom:
            self.act()


class OutageTestCase(base.TestCase):
    """A cluster with ``CUT`` (names of its databases) behind proxies."""

    BACKEND = 'mysql'
    CUT = ()
    CELLS = 1
    HOSTS_PER_CELL = 1
    HOST_CAPACITY = None

    def setUp(self):
        super().setUp()
        self.proxies = {}
        self.cluster = self.useFixture(cluster.Cluster(
            cells=self.CELLS, hosts_per_cell=self.HOSTS_PER_CELL,
            host_capacity=self.HOST_CAPACITY, backend=self.BACKEND,
            reroute={name: self._through_proxy(name) for name in self.CUT}))
        self.ctx = self.cluster.ctx
        self.log = self.useFixture(fixtures.FakeLogger(
            name='cellboot', level=logging.INFO,
            format='%(levelname)s %(name)s %(message)s'))
        self.retried_before = outage.OUTAGE.count
        self._timers = []

    def _through_proxy(self, name):
        def reroute(url):
            url = sa_url.make_url(url)
            proxy = tcp_proxy.TCPProxy(url.host or '127.0.0.1',
                                       url.port or _PORTS[self.BACKEND])
            self.proxies[name] = proxy.start()
            # After the deployment's stop (registered later, run earlier).
            self.addCleanup(proxy.stop)
            return url.set(host='127.0.0.1', port=proxy.port) \
                .render_as_string(hide_password=False)
        return reroute

    def cut(self, names=None):
        """Cut the databases ``names`` (default: all of ``CUT``)."""
        for name in names or self.CUT:
            self.proxies[name].cut()

    def restore_after(self, seconds=OUTAGE_SECONDS, names=None):
        """Bring them back in ``seconds``, from another thread."""
        def restore():
            for name in names or self.CUT:
                self.proxies[name].restore()
        timer = threading.Timer(seconds, restore)
        timer.daemon = True
        self.addCleanup(restore)
        self.addCleanup(timer.cancel)
        timer.start()
        self._timers.append(timer)
        return timer

    def wait_for_quiet(self):
        """The cluster's ``wait_for_quiet``, once the outage is over.

        The cluster reads the databases it checks through the proxies:
        a read of the test's own that meets the outage (the cut came
        after the wait began) waits for the restore and looks again.
        """
        deadline = time.monotonic() + cluster.QUIET_TIMEOUT
        while True:
            for timer in list(self._timers):
                timer.join()
            try:
                return self.cluster.wait_for_quiet()
            except Exception as exc:
                if (not outage.is_connection_lost(exc) or
                        time.monotonic() > deadline):
                    raise

    def cut_for(self, seconds=OUTAGE_SECONDS, names=None):
        """Cut ``names`` now and bring them back in ``seconds``; once."""
        if getattr(self, '_was_cut', False):
            return
        self._was_cut = True
        self.cut(names)
        self.restore_after(seconds, names)

    def cut_when(self, atom, state=states.RUNNING, names=None):
        """Make the super conductor's flows cut ``names`` at ``atom``."""
        self.cluster.super_conductor.runner.flow_listeners = [
            lambda engine: OnAtom(engine, atom,
                                  lambda: self.cut_for(names=names), state)]

    def assert_rode_it_out(self):
        """Something waited for the database, and said so once."""
        self.assertGreater(outage.OUTAGE.count, self.retried_before)
        self.assertIn('cannot be reached', self.log.output)
        self.assertIn('The database answers again', self.log.output)

    def assert_active(self, uuids):
        """Every instance ACTIVE, one claim each on its host, no fault."""
        for uuid in uuids:
            cell, instance = self.cluster.find(uuid)
            self.assertEqual(
                (instance_obj.vm_states.ACTIVE, None, None),
                (instance.vm_state, instance.task_state,
                 self.cluster.fault(uuid)), uuid)
            self.assertEqual(1, len(self.cluster.allocations(uuid)), uuid)
        self.assertEqual([], invariants.check_invariants(self.ctx))
