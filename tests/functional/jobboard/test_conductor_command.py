"""``cellboot-conductor --cell NAME --super``: one process, both roles,
each named in its start line; with a jobboard, each names its board."""

import os
import signal
import textwrap
import time

from cellboot.db import migration
from cellboot.flowrun import schema as flow_schema
from tests import base
from tests.functional import commands
from tests import fixtures as cb_fixtures

# Seconds the command may take to start, or to stop once told.
TIMEOUT = 60


class SuperAndCellConductorCommandTest(base.TestCase):

    def _config(self, extra):
        def url(name):
            return 'sqlite:///' + os.path.join(self.state_path,
                                               f'{name}.sqlite')
        migration.db_sync('api', url('api'))
        flow_schema.sync_flow_database(url('flows'))
        flow_schema.sync_cell_database(url('cell1'))
        path = os.path.join(self.state_path, 'cellboot.conf')
        with open(path, 'w') as conf:
            conf.write(textwrap.dedent(f'''
                [DEFAULT]
                state_path = {self.state_path}
                transport_url = fake://
                host = conductor-host
                [api_database]
                connection = {url('api')}
                [flow_persistence]
                connection = {url('flows')}
                [database]
                connection = {url('cell1')}
                ''') + textwrap.dedent(extra))
        return path

    def _started_lines(self, process, count=2):
        """The ``Conductor ... started`` lines, once ``count`` came."""
        found, seen = [], []
        deadline = time.monotonic() + TIMEOUT
        while len(found) < count and time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                break
            seen.append(line)
            if 'Conductor ' in line and ' started: ' in line:
                found.append(line)
        self.assertEqual(count, len(found), ''.join(seen))
        return found

    def _start(self, path):
        return commands.start_module(self, 'cellboot.cmd.conductor',
                                     '--cell', 'cell1', '--super',
                                     '--config-file', path)

    def test_one_process_serves_both_roles_each_from_its_board(self):
        redis = self.useFixture(cb_fixtures.Redis())
        process = self._start(self._config(f'''
            [jobboard]
            backend = redis
            url = {redis.url}
            namespace = {redis.namespace}
            '''))
        boot, reschedule = self._started_lines(process)
        owner = f'conductor-host:{process.pid}'
        self.assertIn(f'Conductor {owner} started: boot flows, topic '
                      f'cellboot-conductor, jobboard {redis.namespace}.boot',
                      boot)
        self.assertIn(f'Conductor {owner} started: reschedule flows, topic '
                      f'cellboot-conductor.cell1, jobboard '
                      f'{redis.namespace}.cell.cell1.reschedule', reschedule)
        process.send_signal(signal.SIGTERM)
        _stdout, stderr = process.communicate(timeout=TIMEOUT)
        self.assertEqual(0, process.returncode, stderr)
