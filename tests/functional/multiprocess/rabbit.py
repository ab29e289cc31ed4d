"""A RabbitMQ vhost per test: queues that no other run can see.

cellboot's API-level topics (``cellboot-conductor``,
``cellboot-scheduler``) are the same in every deployment, and RabbitMQ
names queues after topics: two deployments on one vhost would consume
each other's requests. A vhost of its own isolates a deployment, and
deleting it removes every queue and exchange it made, so nothing leaks
into the broker. Making a vhost needs ``rabbitmqctl`` as root (tests
run as root here and in CI); without it the test is skipped, or fails
under ``CI=true``.
"""

import socket
import subprocess
import unittest
import uuid

import fixtures

from tests import fixtures as cb_fixtures

HOST = '127.0.0.1'
PORT = 5672
CREDENTIALS = 'guest:guest'
USER = 'guest'

RABBITMQCTL_TIMEOUT = 60


def _rabbitmqctl(*args):
    return subprocess.run(['rabbitmqctl', '-q', *args], capture_output=True,
                          text=True, timeout=RABBITMQCTL_TIMEOUT, check=True)


def _unavailable(reason):
    message = f'RabbitMQ cannot be used ({reason})'
    if cb_fixtures.in_ci():
        raise AssertionError(f'CI=true and {message}')
    raise unittest.SkipTest(message)


class Vhost(fixtures.Fixture):
    """A new vhost on the local broker; ``url`` is its rabbit:// URL."""

    def _setUp(self):
        try:
            socket.create_connection((HOST, PORT), 2).close()
        except OSError as exc:
            _unavailable(f'nothing listens on {HOST}:{PORT}: {exc}')
        self.name = f'cellboot-mp-{uuid.uuid4().hex[:12]}'
        try:
            _rabbitmqctl('add_vhost', self.name)
            self.addCleanup(self._delete)
            _rabbitmqctl('set_permissions', '-p', self.name, USER, '.*',
                         '.*', '.*')
        except (OSError, subprocess.SubprocessError) as exc:
            _unavailable(f'rabbitmqctl could not make a vhost: {exc}')
        self.url = f'rabbit://{CREDENTIALS}@{HOST}:{PORT}/{self.name}'

    def _delete(self):
        delete_vhost(self.name)


def delete_vhost(name):
    """Delete vhost ``name`` and its queues; nothing if it is not there."""
    try:
        _rabbitmqctl('delete_vhost', name)
    except (OSError, subprocess.SubprocessError):
        pass
