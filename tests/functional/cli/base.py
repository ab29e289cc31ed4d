"""A running deployment for the CLI to talk to, and a way to run the CLI.

``CLITestCase`` starts ``cellboot.allinone.deployment.Deployment`` (the
all-in-one's composition: every service and the REST API on a free
port) in the test's state directory, and ``cli(...)`` runs the
``cellboot`` command in this process with its output captured, so a
test sees the exit code, stdout and stderr a user would.
"""

import contextlib
import io

from cellboot.allinone import deployment
from cellboot.cli import client
from cellboot.cli import servers
from cellboot.cmd import cellboot
from tests import base

USER_TOKEN = 'alice:project-a'
OTHER_TOKEN = 'bob:project-b'
ADMIN_TOKEN = 'admin:admin'


class Result:
    """Exit code and output of one CLI run."""

    def __init__(self, code, out, err):
        self.code = code
        self.out = out
        self.err = err

    def __repr__(self):
        return f'<exit {self.code}\nstdout:\n{self.out}\nstderr:\n{self.err}>'


class CLITestCase(base.TestCase):
    """The CLI against a whole deployment's REST API."""

    CELLS = 2
    HOSTS_PER_CELL = 1
    FAIL_HOSTS = ()
    # ``{(group, option): value}`` set before the deployment starts.
    CONFIG = {}

    def setUp(self):
        super().setUp()
        for (group, name), value in self.CONFIG.items():
            self.flags(**{name: value}, group=group)
        self.deployment = deployment.Deployment(
            self.state_path, cells=self.CELLS,
            hosts_per_cell=self.HOSTS_PER_CELL, port=0,
            fail_hosts=self.FAIL_HOSTS)
        self.deployment.start()
        self.addCleanup(self.deployment.stop)

    def cli(self, *args, token=USER_TOKEN, url=None):
        argv = ['--url', url or self.deployment.url]
        if token is not None:
            argv += ['--token', token]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cellboot.main(argv + list(args))
            except SystemExit as exc:
                code = exc.code
        return Result(code, out.getvalue(), err.getvalue())

    def assertOneLineError(self, result, code, *fragments):
        """Exit ``code``, one ``ERROR:`` line naming ``fragments``."""
        self.assertEqual(code, result.code, result)
        lines = result.err.splitlines()
        self.assertEqual(1, len(lines), result)
        self.assertTrue(lines[0].startswith('ERROR: '), result)
        self.assertNotIn('Traceback', result.err)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def create(self, name='web', token=USER_TOKEN, wait=False):
        """Boot one server (and wait until it settles); its id."""
        result = self.cli('server', 'create', name, '--flavor',
                          deployment.DEFAULT_FLAVOR['flavorid'], token=token)
        self.assertEqual(0, result.code, result)
        server_id = result.out.strip()
        if wait:
            servers.wait_for(client.Client(self.deployment.url, token),
                             [server_id], timeout=60)
        return server_id
