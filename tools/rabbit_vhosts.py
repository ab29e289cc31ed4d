"""RabbitMQ vhosts of their own, for test and benchmark deployments.

cellboot's API-level topics (``cellboot-conductor``,
``cellboot-scheduler``) are the same in every deployment, and RabbitMQ
names queues after topics: two deployments on one vhost would consume
each other's requests. A vhost of its own isolates a deployment, and
deleting it removes every queue and exchange it made, so nothing leaks
into the broker. Making a vhost needs ``rabbitmqctl`` as root (the
tests and benchmarks run as root here and in CI); ``create`` says why
it could not (``Unavailable``), and the caller decides whether that is
a skip or a failure.

Shared by ``tests.functional.multiprocess.rabbit`` (a fixture) and the
benchmarks, which must not import the test suite.
"""

import socket
import subprocess
import uuid

HOST = '127.0.0.1'
PORT = 5672
CREDENTIALS = 'guest:guest'
USER = 'guest'

RABBITMQCTL_TIMEOUT = 60


class Unavailable(Exception):
    """The local broker, or rabbitmqctl, cannot be used; says why."""


def rabbitmqctl(*args):
    return subprocess.run(['rabbitmqctl', '-q', *args], capture_output=True,
                          text=True, timeout=RABBITMQCTL_TIMEOUT, check=True)


def url(name):
    """The rabbit:// transport URL of vhost ``name`` on the broker."""
    return f'rabbit://{CREDENTIALS}@{HOST}:{PORT}/{name}'


def create(prefix='cellboot-mp'):
    """A new vhost ``PREFIX-<random>`` the guest user may use; its name.

    Raises Unavailable when nothing listens on the broker's port or
    rabbitmqctl fails (a vhost half made is deleted first).
    """
    try:
        socket.create_connection((HOST, PORT), 2).close()
    except OSError as exc:
        raise Unavailable(f'nothing listens on {HOST}:{PORT}: {exc}')
    name = f'{prefix}-{uuid.uuid4().hex[:12]}'
    try:
        rabbitmqctl('add_vhost', name)
    except (OSError, subprocess.SubprocessError) as exc:
        raise Unavailable(f'rabbitmqctl could not make a vhost: {exc}')
    try:
        rabbitmqctl('set_permissions', '-p', name, USER, '.*', '.*', '.*')
    except (OSError, subprocess.SubprocessError) as exc:
        delete(name)
        raise Unavailable(f'rabbitmqctl could not make a vhost: {exc}')
    return name


def delete(name):
    """Delete vhost ``name`` and its queues; nothing if it is not there."""
    try:
        rabbitmqctl('delete_vhost', name)
    except (OSError, subprocess.SubprocessError):
        pass
