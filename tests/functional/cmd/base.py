"""Running ``cellboot-manage`` as an operator does, on real databases.

Each test gets its own databases on its backend: an API database, cell1,
and, when it asks, cell0 and a flow database; and a configuration file
that names them.
Preparation that is not under test (schemas, cell mappings, compute
nodes, instances) is done in-process through the models and objects,
which is fast; the behaviour under test is always a real
``cellboot-manage`` process, whose exit code, stdout and stderr are what
the tests check.

Every module runs on SQLite and MariaDB. PostgreSQL, whose databases are
slow to create and drop, runs where its behaviour differs: migrations
(``test_db``), concurrent discovery (``test_discover_hosts``) and the
errors of a database that was never synced.
"""

import functools
import os
import subprocess
import sys
import textwrap

import sqlalchemy as sa

from cellboot import context as cb_context
from cellboot.db.api import connection as api_connection
from cellboot.objects import cell_mapping
from tests import base
from tests import fixtures as cb_fixtures

# Seconds a single command may take before the test gives up on it.
COMMAND_TIMEOUT = 120

# Tables of the API database that no refused command may change.
API_TABLES = ('cell_mappings', 'host_mappings', 'instance_mappings',
              'flavors', 'flavor_extra_specs', 'resource_classes', 'traits',
              'build_requests', 'zones')

RABBIT_URL = 'rabbit://guest:guest@127.0.0.1:5672/'
# Another bus on the same broker (a vhost of its own), for a second cell.
CELL2_RABBIT_URL = 'rabbit://guest:guest@127.0.0.1:5672/cell2'

# A database server that is certainly not listening (port 1), with a
# password that must never appear in any output.
DEAD_PASSWORD = 'n0tTheRealPassw0rd'
DEAD_DATABASE_URL = (f'mysql+pymysql://cellboot:{DEAD_PASSWORD}@127.0.0.1:1/'
                     f'cellboot')


class Result:
    """What a finished command left: exit code, stdout, stderr."""

    def __init__(self, args, code, stdout, stderr):
        self.args = args
        self.code = code
        self.stdout = stdout
        self.stderr = stderr

    @property
    def stderr_lines(self):
        return [line for line in self.stderr.splitlines() if line.strip()]

    def __repr__(self):
        return (f'<cellboot-manage {" ".join(self.args)}: exit {self.code}\n'
                f'stdout:\n{self.stdout}\nstderr:\n{self.stderr}>')


def command_line(*args):
    """The argv that runs ``cellboot-manage`` with this interpreter."""
    return [sys.executable, '-m', 'cellboot.cmd.manage', *args]


def start(*args):
    """Start ``cellboot-manage`` without waiting (concurrency tests)."""
    return subprocess.Popen(command_line(*args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(process, args):
    stdout, stderr = process.communicate(timeout=COMMAND_TIMEOUT)
    return Result(args, process.returncode, stdout, stderr)


def run(*args):
    """Run ``cellboot-manage`` and wait for its Result."""
    return finish(start(*args), args)


def run_python(code, *args):
    """Run a Python snippet with ``args`` as its ``sys.argv[1:]``."""
    process = subprocess.Popen(
        [sys.executable, '-c', code, *args], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    return finish(process, args)


class ManageTestCase(base.TestCase):
    """Databases on ``BACKEND`` and a config file naming them.

    ``self.api_url``, ``self.cell0_url``, ``self.cell1_url`` start with
    their schema (from the models) unless ``EMPTY_DATABASES``; the flow
    database always starts empty, and is on the backend only for
    ``EMPTY_DATABASES`` tests (the others never sync). ``CONF`` in the
    test process points at the same API database, so objects can prepare
    and inspect it.
    """

    BACKEND = 'sqlite'
    EMPTY_DATABASES = False

    def setUp(self):
        super().setUp()
        api_schema, cell_schema = 'api', 'cell'
        if self.EMPTY_DATABASES:
            api_schema = cell_schema = None
        self.api_url = self._database(api_schema)
        self.cell1_url = self._database(cell_schema)
        if self.EMPTY_DATABASES:
            self.flow_url = self._database(None)
        else:
            # Only db sync uses it: a file spares a server database.
            self.flow_url = 'sqlite:///' + os.path.join(self.state_path,
                                                        'flows.sqlite')
        self.flags(connection=self.api_url, group='api_database')
        self.flags(connection=self.cell1_url, group='database')
        api_connection.reset()
        self.context = cb_context.get_admin_context()
        self.config_file = self.write_config()

    @functools.cached_property
    def cell0_url(self):
        """cell0's database, made on first use (servers are slow at it)."""
        return self._database(None if self.EMPTY_DATABASES else 'cell')

    def _database(self, schema, name=None):
        return self.useFixture(
            cb_fixtures.Database(self.BACKEND, schema=schema, name=name)).url

    def write_config(self, extra='', name='cellboot.conf', **urls):
        """Write a configuration file; ``urls`` override the defaults."""
        values = {'api_url': self.api_url, 'flow_url': self.flow_url,
                  'cell_url': self.cell1_url}
        values.update(urls)
        path = os.path.join(self.state_path, name)
        with open(path, 'w') as conf:
            conf.write(textwrap.dedent(f"""\
                [DEFAULT]
                state_path = {self.state_path}

                [api_database]
                connection = {values['api_url']}

                [flow_persistence]
                connection = {values['flow_url']}

                [database]
                connection = {values['cell_url']}
                """) + textwrap.dedent(extra))
        return path

    def manage(self, *args, config_file=None):
        """Run ``cellboot-manage --config-file F ARGS``."""
        return run('--config-file', config_file or self.config_file, *args)

    # -- preparation through the objects ---------------------------------

    def map_cell0(self):
        return cell_mapping.CellMapping.create(
            self.context, 'cell0', self.cell0_url, 'none:///',
            uuid=cell_mapping.CELL0_UUID)

    def map_cell1(self, name='cell1', url=None, transport_url=RABBIT_URL,
                  disabled=False):
        return cell_mapping.CellMapping.create(
            self.context, name, url or self.cell1_url, transport_url,
            disabled=disabled)

    # -- assertions --------------------------------------------------------

    def api_snapshot(self):
        """Every row of the API tables that commands may write."""
        engine = sa.create_engine(self.api_url, poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                return {table: self._rows(conn, table)
                        for table in API_TABLES}
        finally:
            engine.dispose()

    @staticmethod
    def _rows(conn, table):
        rows = conn.execute(sa.text(f'SELECT * FROM {table}'))
        return sorted(tuple(map(str, row)) for row in rows)

    def assertSucceeded(self, result):
        self.assertEqual(0, result.code, result)
        self.assertNotIn('Traceback', result.stderr, result)

    def assertOneLineError(self, result, code, *fragments):
        """Exit ``code``, one line on stderr holding ``fragments``."""
        self.assertEqual(code, result.code, result)
        self.assertNotIn('Traceback', result.stderr, result)
        self.assertEqual(1, len(result.stderr_lines), result)
        self.assertTrue(result.stderr_lines[0].startswith('ERROR: '), result)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr_lines[0], result)
