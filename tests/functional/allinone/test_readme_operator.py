"""The README's operator section, pasted into a shell and run.

The ``sh`` blocks of "The API, the CLI and a rescheduled server's flow"
are read from README.md itself, so a README change that no longer works
fails here. Only what cannot be pasted as is gets substituted: a
temporary state directory for ``/tmp/cb``, a free port for the default
8774 (``CELLBOOT_URL`` carries it to the CLI, whose default it is), and
the placeholders (SERVER_ID, REQUEST_ID, FLOW_ID) by values read from
the output of the commands before them. SERVER_ID is a server whose
first build failed on ``cell1-host1``, so ``event show`` must name the
failure and ``flow show`` must find a reschedule flow.
"""

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time

import fixtures
import requests

from tests import base
from tests.functional.allinone import test_all_in_one
from tests.functional.api import test_command

README = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                      'README.md')
SECTION = "## The API, the CLI and a rescheduled server's flow"
TIMEOUT = test_all_in_one.TIMEOUT
# Each command is one CLI or curl call: seconds, not minutes.
COMMAND_TIMEOUT = 60
_UUID = r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
# A variable the shell lines after it need: ``API=...``, ``export ...``.
_ASSIGNMENT = re.compile(r'^(export\s+)?[A-Z_]+=')


def section(text, heading=SECTION):
    """The text from ``heading`` to the next second-level heading."""
    start = text.index(heading + '\n')
    end = text.find('\n## ', start + len(heading))
    return text[start:end if end != -1 else len(text)]


def blocks(text, language):
    """The fenced blocks of ``language`` in ``text`` (``''``: bare)."""
    found, current, opened = [], None, None
    for line in text.splitlines():
        if not line.startswith('```'):
            if current is not None:
                current.append(line)
        elif current is None:
            current, opened = [], line[3:].strip()
        else:
            if opened == language:
                found.append('\n'.join(current) + '\n')
            current = None
    return found


def commands(block):
    """A block's shell commands; one may span lines (a quoted string or
    a trailing backslash)."""
    found, pending = [], ''
    for line in block.splitlines():
        pending += line + '\n'
        try:
            complete = shlex.split(pending, comments=True)
        except ValueError:
            continue
        if complete and not pending.rstrip().endswith('\\'):
            found.append(pending.strip())
            pending = ''
        elif not complete:
            pending = ''
    return found


def normalized(line):
    """A line of output with what changes between runs made alike."""
    line = re.sub(_UUID, 'UUID', line)
    line = re.sub(r'\d+ ms\b', 'N ms', line)
    line = re.sub(r'cell\d+-host\d+', 'HOST', line)
    line = re.sub(r'-+', '-', line)
    return re.sub(r'\s+', ' ', line).strip()


class ReadmeOperatorSectionTest(base.TestCase):

    def setUp(self):
        super().setUp()
        with open(README) as readme:
            self.section = section(readme.read())
        self.scripts = os.path.join(sys.prefix, 'bin')
        if not os.path.exists(os.path.join(self.scripts, 'cellboot')):
            self.skipTest(f'cellboot is not installed in {sys.prefix}')
        temp = self.useFixture(fixtures.TempDir()).path
        self.state_dir = os.path.join(temp, 'cb')
        # The README's commands run from a checkout with .venv in it.
        self.workdir = os.path.join(temp, 'checkout')
        os.mkdir(self.workdir)
        os.symlink(sys.prefix, os.path.join(self.workdir, '.venv'))
        self.port = None
        self.env = dict(os.environ)
        tree = os.path.dirname(os.path.abspath(README))
        self.env['PYTHONPATH'] = os.pathsep.join(
            [tree] + [p for p in [os.environ.get('PYTHONPATH')] if p])
        for name in ('CELLBOOT_URL', 'CELLBOOT_TOKEN'):
            self.env.pop(name, None)
        self.values = {}
        self.variables = []

    def substitute(self, command):
        command = re.sub(r'/tmp/cb\b', self.state_dir, command)
        if self.port is not None:
            command = command.replace('8774', str(self.port))
        for name, value in self.values.items():
            command = command.replace(name, value)
        return command

    def start_all_in_one(self, command):
        """Run the README's first block until the ready line; stop it
        (SIGINT, as Ctrl-C does) at clean-up."""
        self.assertIn('all-in-one', command)
        self.assertNotIn('--port', command)
        self.port = test_command.free_port()
        line = f'{self.substitute(command)} --port {self.port}'
        process = subprocess.Popen(
            ['bash', '-c', 'exec ' + line], cwd=self.workdir, env=self.env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.addCleanup(self._stop, process)
        started = []
        for output in process.stdout:
            started.append(output)
            if output.startswith('Ready: '):
                break
        self.assertTrue(started and started[-1].startswith('Ready: '),
                        ''.join(started))
        threading.Thread(target=process.stdout.read, daemon=True).start()
        self.api = f'http://127.0.0.1:{self.port}/v2.1'
        self.assertIn(f'--url {self.api} ', started[-1])
        self.env['CELLBOOT_URL'] = self.api

    def _stop(self, process):
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def run_command(self, command):
        """One README command in bash, after the variables set before
        it; its output, having checked it exits 0."""
        line = self.substitute(command)
        self.assertNotRegex(line, r'\b(SERVER|REQUEST|FLOW)_ID\b')
        script = '\n'.join(self.variables + [line])
        process = subprocess.run(
            ['bash', '-ec', script], cwd=self.workdir, env=self.env,
            capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
        self.assertEqual(0, process.returncode,
                         f'{line}\n{process.stdout}\n{process.stderr}')
        if _ASSIGNMENT.match(line):
            self.variables.append(line)
        return process.stdout

    def admin(self, path):
        response = requests.get(self.api + path, timeout=COMMAND_TIMEOUT,
                                headers={'X-Auth-Token': 'admin:admin'})
        self.assertEqual(200, response.status_code, response.text)
        return response.json()

    def wait_until_active(self, ids):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            statuses = {self.admin(f'/servers/{uuid}')['server']['status']
                        for uuid in ids}
            if statuses == {'ACTIVE'}:
                return
            self.assertNotIn('ERROR', statuses)
            time.sleep(0.2)
        self.fail(f'not all ACTIVE: {statuses}')

    def rescheduled(self, listing):
        """The first listed server whose create action has an error."""
        ids = re.findall(r'^\| (' + _UUID + ') ', listing, re.MULTILINE)
        self.wait_until_active(ids)
        for uuid in ids:
            actions = self.admin(f'/servers/{uuid}/os-instance-actions')
            if any(action['message'] == 'Error'
                   for action in actions['instanceActions']):
                return uuid
        self.fail('no server was rescheduled off cell1-host1')

    def check(self, command, out):
        """What the README says each command shows."""
        if 'POST $API/servers' in command:
            self.assertEqual(4, len(json.loads(out)['servers']))
        elif 'curl -s $API/servers ' in command:
            names = [s['name'] for s in json.loads(out)['servers']]
            self.assertEqual(['web'] * 4, names)
        elif 'os-hypervisors/detail' in command:
            hosts = [h['hypervisor_hostname']
                     for h in json.loads(out)['hypervisors']]
            self.assertIn('cell1-host1', hosts)
            self.assertEqual(8, len(hosts))
        elif 'server create db' in command:
            self.assertEqual(2, len(re.findall(r'\| db +\| ACTIVE ', out)),
                             out)
        elif command.endswith('server list'):
            self.assertEqual(4, len(re.findall(r'\| web +\| ', out)), out)
            self.assertEqual(2, len(re.findall(r'\| db +\| ', out)), out)
            self.values['SERVER_ID'] = self.rescheduled(out)
        elif ' server show ' in command:
            self.check_server_show(out)
        elif 'server event list' in command:
            (request,) = re.findall(r'^\| (req-[0-9a-f-]+) +\| create +\|',
                                    out, re.MULTILINE)
            self.assertRegex(out, r'\| Error +\|')
            self.values['REQUEST_ID'] = request
        elif 'server event show' in command:
            self.assertRegex(out, r'compute_build_and_run_instance +\| '
                                  r'Error +\|.*The build failed on the '
                                  r'host chosen for it\.')
            self.assertIn('retried on another host', out)
            self.assertRegex(out, r'compute_build_and_run_instance +\| '
                                  r'Success ')
        elif 'server delete' in command:
            self.check_deleted(out)
        elif ' flow show SERVER_ID' in command:
            self.assertRegex(out, r'boot \(boot, flow database\): SUCCESS')
            self.assertRegex(out, r'reschedule \(reschedule, cell cell1\): '
                                  r'SUCCESS')
        elif 'flows list --instance' in command:
            (flow,) = re.findall(r'^\| (' + _UUID + r') \| reschedule +\| '
                                 r'SUCCESS ', out, re.MULTILINE)
            self.values['FLOW_ID'] = flow
        elif 'flows show' in command:
            self.check_shown_output(out)
        elif '--dot flow.dot' in command:
            self.check_dot(out)
        elif command.startswith('printf'):
            self.assertTrue(os.path.exists(
                os.path.join(self.state_dir, 'cellboot.conf')))

    def check_server_show(self, out):
        self.assertRegex(out, r'\| id +\| ' + self.values['SERVER_ID'])
        self.assertRegex(out, r'\| status +\| ACTIVE ')
        self.assertRegex(out, r'\| host +\| cell\d-host\d ')
        self.assertNotRegex(out, r'\| host +\| cell1-host1 ')
        self.assertRegex(out, r'reschedule \(reschedule, cell cell1\): '
                              r'SUCCESS')

    def check_deleted(self, out):
        uuid = self.values['SERVER_ID']
        self.assertEqual(f'Server {uuid} deleted.\n', out)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            listed = self.admin('/servers?all_tenants=1')['servers']
            if uuid not in {server['id'] for server in listed}:
                return
            time.sleep(0.2)
        self.fail(f'{uuid} is still listed')

    def check_shown_output(self, out):
        """The README's example output, line for line, but for what
        changes between runs (ids, durations, hosts)."""
        (shown,) = blocks(self.section, '')
        lines = [normalized(line) for line in out.splitlines()]
        flow = self.values['FLOW_ID']
        start = lines.index(normalized(f'Flow {flow} (reschedule): '
                                       f'SUCCESS'))
        position = start
        for expected in shown.splitlines():
            if expected == '...':
                continue
            expected = normalized(expected)
            self.assertIn(expected, lines[position:], out)
            position = lines.index(expected, position) + 1

    def check_dot(self, out):
        self.assertIn('Graph written to flow.dot', out)
        with open(os.path.join(self.workdir, 'flow.dot')) as dot:
            graph = dot.read()
        self.assertIn('digraph "reschedule"', graph)
        self.assertIn(self.values['FLOW_ID'], graph)
        for atom in ('alternates', 'claim-alternate', 'cast-to-compute'):
            self.assertRegex(graph, atom + r'\\nSUCCESS')

    def test_every_command_of_the_section_works_as_shown(self):
        first, *rest = blocks(self.section, 'sh')
        (server,) = commands(first)
        self.start_all_in_one(server)
        ran = []
        for block in rest:
            for command in commands(block):
                self.check(command, self.run_command(command))
                ran.append(command)
        # The README still shows what this test checks.
        for fragment in ('server create', 'server list', 'server show',
                         'event list', 'event show', 'server delete',
                         'flow show SERVER_ID', 'flows list', 'flows show',
                         '--dot'):
            self.assertTrue(any(fragment in c for c in ran), fragment)
