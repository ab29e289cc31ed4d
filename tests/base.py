"""Base test classes, run alike by pytest and stestr (testtools style)."""

from futurist import _thread as futurist_thread
import testtools

from tests import fixtures as cb_fixtures

# An idle worker thread of an RPC server's executor (futurist's) looks
# for its stop flag only when its wait for work times out, after a
# second: stopping a test's deployment, in two rounds, took two seconds
# of every test that runs one, asleep. A worker here looks every 20 ms.
futurist_thread.ThreadWorker.MAX_IDLE_FOR = 0.02


class TestCase(testtools.TestCase):
    """Every cellboot test: a clean configuration, state in a temp dir."""

    def setUp(self):
        super().setUp()
        self.conf_fixture = self.useFixture(cb_fixtures.ConfFixture())
        self.flags = self.conf_fixture.conf.config
        self.state_path = self.conf_fixture.state_path


class SQLiteMixin:
    BACKEND = 'sqlite'


class MySQLMixin:
    BACKEND = 'mysql'


class PostgreSQLMixin:
    BACKEND = 'postgresql'


class DatabaseTestCase(TestCase):
    """A test with an API database and ``CELLS`` cell databases.

    Concrete classes mix in one of the backend mixins; keep the tests in a
    mixin-free base so each backend runs the same specification.
    """

    BACKEND = 'sqlite'
    CELLS = 1

    def setUp(self):
        super().setUp()
        self.dbs = self.useFixture(
            cb_fixtures.DatabasesFixture(self.BACKEND, cells=self.CELLS))
