"""Buses for RPC tests: ``fake://`` in-process, or a real RabbitMQ.

RabbitMQ queues are named after their topics, and ``cellboot-scheduler``
or ``cellboot-conductor`` are the same in every test run: two test runs
sharing the broker's default vhost would steal each other's messages. So
each test process gets a vhost of its own (created with ``rabbitmqctl``
when it may, deleted when the process exits), and falls back to ``/``
where it may not. Tests that need several buses (a cell's apart from the
API's) get more vhosts of the process by name (``rabbit_url(vhost=)``).
Without a broker, rabbit tests skip, or fail under ``CI=true``.
"""

import atexit
import socket
import subprocess
import threading
import uuid

import unittest

import fixtures
import oslo_messaging

from cellboot import context as cb_context
from cellboot import rpc
from cellboot import service
from tests import fixtures as cb_fixtures

RABBIT_HOST = '127.0.0.1'
RABBIT_PORT = 5672
RABBIT_CREDENTIALS = 'guest:guest'

# Seconds a test waits for a cast to arrive (or to be sure it did not).
DELIVERY_TIMEOUT = 10
NOT_DELIVERED_WAIT = 1.0

_vhosts = {}
_vhost_lock = threading.Lock()


def _rabbitmqctl(*args):
    return subprocess.run(['rabbitmqctl', '-q', *args], capture_output=True,
                          text=True, timeout=120, check=True)


def _delete_vhost(name):
    try:
        _rabbitmqctl('delete_vhost', name)
    except (OSError, subprocess.SubprocessError):
        pass


def _process_vhost(label=''):
    """This process's own vhost (per label), or '' if none can be made."""
    with _vhost_lock:
        if label not in _vhosts:
            name = f'cellboot-test-{uuid.uuid4().hex[:12]}{label}'
            try:
                _rabbitmqctl('add_vhost', name)
                _rabbitmqctl('set_permissions', '-p', name, 'guest', '.*',
                             '.*', '.*')
            except (OSError, subprocess.SubprocessError):
                _delete_vhost(name)
                if label:
                    raise AssertionError(
                        f'rabbitmqctl could not make vhost {name}')
                name = ''
            else:
                atexit.register(_delete_vhost, name)
            _vhosts[label] = name
    return _vhosts[label]


def rabbit_url(host=RABBIT_HOST, vhost=''):
    """A rabbit:// URL of this process's vhost; skips without a broker.

    ``vhost`` names another vhost of this process (``'cell1'``...): a
    bus apart from the default one, which needs ``rabbitmqctl``.
    """
    try:
        socket.create_connection((RABBIT_HOST, RABBIT_PORT), 2).close()
    except OSError as exc:
        message = (f'RabbitMQ is not reachable at {RABBIT_HOST}:'
                   f'{RABBIT_PORT} ({exc}); start it to run this test')
        if cb_fixtures.in_ci():
            raise AssertionError(f'CI=true and {message}')
        raise unittest.SkipTest(message)
    return (f'rabbit://{RABBIT_CREDENTIALS}@{host}:{RABBIT_PORT}/'
            f'{_process_vhost(vhost and f"-{vhost}")}')


def transport_url(driver):
    """A transport URL for ``driver`` ('fake' or 'rabbit')."""
    if driver == 'rabbit':
        return rabbit_url()
    return 'fake://'


class Buses(fixtures.Fixture):
    """Servers started by a test, stopped and their transports closed."""

    def _setUp(self):
        self.services = []
        self.addCleanup(self._stop)

    def serve(self, host, topic, endpoints, transport):
        server = service.RPCService(host, topic, endpoints, transport)
        server.start()
        self.services.append(server)
        return server

    def _stop(self):
        for server in reversed(self.services):
            server.stop()
        for server in reversed(self.services):
            server.wait()
        rpc.cleanup()


class Recorder:
    """An endpoint's memory: each message received, and a way to wait."""

    def __init__(self):
        self.received = []
        self._arrived = threading.Condition()

    def record(self, method, context, **kwargs):
        with self._arrived:
            self.received.append((method, context, kwargs))
            self._arrived.notify_all()

    def wait_for(self, count=1, timeout=DELIVERY_TIMEOUT):
        """The messages, once ``count`` have arrived; fails otherwise."""
        with self._arrived:
            if not self._arrived.wait_for(
                    lambda: len(self.received) >= count, timeout):
                raise AssertionError(
                    f'{count} message(s) expected within {timeout} s, '
                    f'{len(self.received)} arrived: {self.received}')
            return list(self.received)

    def nothing_after(self, wait=NOT_DELIVERED_WAIT):
        """True if no message arrived within ``wait`` seconds."""
        with self._arrived:
            self._arrived.wait_for(lambda: self.received, wait)
            return not self.received


class ConductorEndpoint(Recorder):
    """Stands for the super conductor: what its casts deliver."""

    @oslo_messaging.expose
    def schedule_and_build_instances(self, context, build_requests,
                                     request_specs):
        self.record('schedule_and_build_instances', context,
                    build_requests=build_requests,
                    request_specs=request_specs)


class CellConductorEndpoint(Recorder):
    """Stands for a cell conductor."""

    @oslo_messaging.expose
    def build_instances(self, context, instance, request_spec, host_list,
                        retry):
        self.record('build_instances', context, instance=instance,
                    request_spec=request_spec, host_list=host_list,
                    retry=retry)


class ComputeEndpoint(Recorder):
    """Stands for a compute host."""

    @oslo_messaging.expose
    def build_and_run_instance(self, context, instance, host_list,
                               request_spec, retry):
        self.record('build_and_run_instance', context, instance=instance,
                    host_list=host_list, request_spec=request_spec,
                    retry=retry)


def user_context():
    """A non-admin request context, as the API would pass one on."""
    return cb_context.RequestContext(user_id='alice', project_id='p-1',
                                     request_id='req-' + uuid.uuid4().hex)
