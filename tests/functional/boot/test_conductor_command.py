"""``cellboot-conductor`` as an operator runs it: start, stop, refuse."""

import os
import signal
import textwrap
import time

from cellboot.db import migration
from cellboot.flowrun import schema as flow_schema
from tests import base
from tests.functional import commands

# Seconds the command may take to start, or to stop once told.
TIMEOUT = 60


class ConductorCommandTest(base.TestCase):

    def _config(self, text):
        path = os.path.join(self.state_path, 'cellboot.conf')
        with open(path, 'w') as conf:
            conf.write(textwrap.dedent(text))
        return path

    def _start(self, *args):
        return commands.start_module(self, 'cellboot.cmd.conductor', *args)

    def _cell_config(self, **database):
        url = 'sqlite:///' + os.path.join(self.state_path, 'cell1.sqlite')
        flow_schema.sync_cell_database(url)
        return self._config(f'''
            [DEFAULT]
            state_path = {self.state_path}
            transport_url = fake://
            [database]
            connection = {database.get('connection', url)}
            ''')

    def _wait_for(self, process, text):
        """stderr lines until one holds ``text`` (or the process ends)."""
        lines = []
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                break
            lines.append(line)
            if text in line:
                return lines
        self.fail(f'{text!r} never logged: {"".join(lines)}')

    def _super_config(self, more=''):
        api_url = 'sqlite:///' + os.path.join(self.state_path, 'api.sqlite')
        flow_url = 'sqlite:///' + os.path.join(self.state_path,
                                               'flows.sqlite')
        migration.db_sync('api', api_url)
        flow_schema.sync_flow_database(flow_url)
        return self._config(f'''
            [DEFAULT]
            state_path = {self.state_path}
            transport_url = fake://
            [api_database]
            connection = {api_url}
            [flow_persistence]
            connection = {flow_url}
            ''' + more)

    def test_the_super_conductor_serves_its_topic(self):
        process = self._start('--config-file', self._super_config())
        lines = self._wait_for(process, 'Serving')
        self.assertIn('Serving cellboot-conductor as', lines[-1])
        self.assertNotIn('NovaDoor', ''.join(self._wait_for(
            process, 'Conductor ')))

    def test_with_the_nova_door_it_serves_nova_api_s_topic_too(self):
        process = self._start('--config-file', self._super_config('''
            [nova]
            enabled = true
            transport_url = fake:///nova
            '''))
        lines = self._wait_for(process, '(NovaDoor)')
        self.assertIn('Serving conductor as', lines[-1])

    def test_a_door_without_nova_api_s_database_warns_it_mirrors_nothing(self):
        process = self._start('--config-file', self._super_config('''
            [nova]
            enabled = true
            transport_url = fake:///nova
            '''))
        lines = self._wait_for(process, '(NovaDoor)')
        self.assertIn('nova-api will show the servers it casts here in '
                      'BUILD for ever', ''.join(lines))

    def test_the_mirror_says_when_nova_api_s_database_is_not_there(self):
        empty = 'sqlite:///' + os.path.join(self.state_path, 'empty.sqlite')
        process = self._start('--config-file', self._super_config(f'''
            [nova]
            enabled = true
            transport_url = fake:///nova
            api_database_connection = {empty}
            mirror_interval = 0.2
            '''))
        lines = self._wait_for(process, 'Nova mirror: check NovaMirror '
                                        'failed; trying again in 0.2 s')
        # It goes on trying: a database that is down now may be back.
        self._wait_for(process, 'Nova mirror: check NovaMirror failed')
        self.assertIn('cell_mappings', ''.join(lines))

    def test_a_cell_conductor_serves_its_cells_topic(self):
        process = self._start('--cell', 'cell1', '--config-file',
                              self._cell_config())
        lines = self._wait_for(process, 'Serving')
        self.assertIn('cellboot-conductor.cell1', lines[-1])

    def test_sigterm_stops_a_cell_conductor_cleanly(self):
        process = self._start('--cell', 'cell1', '--config-file',
                              self._cell_config())
        self._wait_for(process, 'Serving')
        process.send_signal(signal.SIGTERM)
        _stdout, stderr = process.communicate(timeout=TIMEOUT)
        self.assertEqual(0, process.returncode, stderr)

    def test_a_cell_conductor_without_its_database_says_so(self):
        path = self._config(f'''
            [DEFAULT]
            state_path = {self.state_path}
            transport_url = fake://
            ''')
        process = self._start('--cell', 'cell1', '--config-file', path)
        _stdout, stderr = process.communicate(timeout=TIMEOUT)
        self.assertEqual(1, process.returncode)
        lines = [line for line in stderr.splitlines() if line.strip()]
        self.assertEqual(1, len(lines), stderr)
        self.assertIn('needs its cell database in [database] connection',
                      lines[0])
