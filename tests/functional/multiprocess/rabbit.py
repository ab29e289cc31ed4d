"""A RabbitMQ vhost per test: queues that no other run can see.

The vhosts are made and deleted by ``tools.rabbit_vhosts`` (shared with
the benchmarks, which say why a deployment needs one); this is its
fixture. Without a broker or ``rabbitmqctl`` the test is skipped, or
fails under ``CI=true``.
"""

import unittest

import fixtures

from tests import fixtures as cb_fixtures
from tools import rabbit_vhosts

RABBITMQCTL_TIMEOUT = rabbit_vhosts.RABBITMQCTL_TIMEOUT

delete_vhost = rabbit_vhosts.delete


def _unavailable(reason):
    message = f'RabbitMQ cannot be used ({reason})'
    if cb_fixtures.in_ci():
        raise AssertionError(f'CI=true and {message}')
    raise unittest.SkipTest(message)


class Vhost(fixtures.Fixture):
    """A new vhost on the local broker; ``url`` is its rabbit:// URL."""

    def _setUp(self):
        try:
            self.name = rabbit_vhosts.create()
        except rabbit_vhosts.Unavailable as exc:
            _unavailable(str(exc))
        self.addCleanup(delete_vhost, self.name)
        self.url = rabbit_vhosts.url(self.name)
