"""The CLI rides out a 503 with Retry-After: bounded retries, told on stderr.

The API is a real HTTP server on a free loopback port that answers a
script of statuses (503 with or without Retry-After, then 200), so the
retries are those of the CLI's HTTP stack as a user's run makes them.
``Retry-After: 0`` keeps the test from sleeping.
"""

import contextlib
import http.server
import io
import json
import threading

import urllib3

from cellboot.cli import client as cli_client
from cellboot.cli import exit_codes
from cellboot.cmd import cellboot
from tests import base

_UNAVAILABLE = {'serviceUnavailable': {
    'code': 503, 'message': 'A database of the cloud did not answer.'}}


class _ScriptedAPI(http.server.ThreadingHTTPServer):
    """Answers its ``script`` of ``(status, headers)`` in turn; the last
    one for good. ``seen`` records ``(method, path, body)``."""

    daemon_threads = True

    def __init__(self, script):
        super().__init__(('127.0.0.1', 0), _Handler)
        self.script = list(script)
        self.seen = []
        self.url = f'http://127.0.0.1:{self.server_address[1]}/v2.1'


class _Handler(http.server.BaseHTTPRequestHandler):

    def _answer(self):
        server = self.server
        length = int(self.headers.get('Content-Length') or 0)
        server.seen.append((self.command, self.path,
                            self.rfile.read(length)))
        status, headers = (server.script.pop(0) if len(server.script) > 1
                           else server.script[0])
        body = json.dumps(_UNAVAILABLE if status == 503 else
                          {'servers': [], 'server': {'id': 'x'}}).encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *args):
        pass


BUSY = (503, {'Retry-After': '0'})
OK = (200, {})


class CLIRetryTest(base.TestCase):

    def serve(self, *script):
        api = _ScriptedAPI(script)
        thread = threading.Thread(target=api.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(thread.join, 5)
        self.addCleanup(api.server_close)
        self.addCleanup(api.shutdown)
        return api

    def call(self, api, method, path, body=None):
        err = io.StringIO()
        client = cli_client.Client(api.url, 'alice:project-a')
        with contextlib.redirect_stderr(err):
            try:
                result = client.request(method, path, body=body)
            except cli_client.CLIError as exc:
                result = exc
        return result, err.getvalue().splitlines()

    def test_a_503_with_retry_after_is_retried_until_it_passes(self):
        api = self.serve(BUSY, BUSY, OK)
        result, notices = self.call(api, 'GET', '/servers')
        self.assertEqual({'servers': [], 'server': {'id': 'x'}}, result)
        self.assertEqual(3, len(api.seen))
        self.assertEqual(2, len(notices), notices)
        self.assertIn('retrying in 0 s (attempt 2 of 3)', notices[0])
        self.assertIn('(attempt 3 of 3)', notices[1])

    def test_a_boot_is_sent_again_whole(self):
        api = self.serve(BUSY, OK)
        body = {'server': {'name': 'web', 'flavorRef': 'small'}}
        self.call(api, 'POST', '/servers', body)
        self.assertEqual(2, len(api.seen))
        self.assertEqual(api.seen[0], api.seen[1])
        self.assertEqual(body, json.loads(api.seen[1][2]))

    def test_the_retries_are_bounded(self):
        api = self.serve(BUSY)
        error, notices = self.call(api, 'DELETE', '/servers/x')
        self.assertIsInstance(error, cli_client.CLIError)
        self.assertEqual(exit_codes.ERROR, error.code)
        self.assertIn('did not answer', error.message)
        self.assertEqual(cli_client.ATTEMPTS, len(api.seen))
        self.assertEqual(cli_client.ATTEMPTS - 1, len(notices))

    def test_a_503_without_retry_after_is_not_retried(self):
        api = self.serve((503, {}), OK)
        error, notices = self.call(api, 'GET', '/servers')
        self.assertIsInstance(error, cli_client.CLIError)
        self.assertEqual(1, len(api.seen))
        self.assertEqual([], notices)

    def test_other_errors_are_not_retried(self):
        api = self.serve((500, {'Retry-After': '0'}), OK)
        error, _notices = self.call(api, 'GET', '/servers')
        self.assertIsInstance(error, cli_client.CLIError)
        self.assertEqual(1, len(api.seen))

    def test_the_command_tells_each_retry_in_one_line(self):
        api = self.serve(BUSY, OK)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cellboot.main(['--url', api.url, '--token',
                                  'alice:project-a', 'server', 'list'])
        self.assertEqual(0, code, err.getvalue())
        (notice,) = err.getvalue().splitlines()
        self.assertTrue(notice.startswith('cellboot: the API answered 503'),
                        notice)

    def test_a_long_retry_after_is_capped(self):
        response = urllib3.HTTPResponse(status=503,
                                        headers={'Retry-After': '3600'})
        retry = cli_client.RetryAfter.for_attempts(3)
        self.assertEqual(cli_client.MAX_RETRY_AFTER,
                         retry.get_retry_after(response))

    def test_an_unreadable_retry_after_waits_a_second_and_retries(self):
        api = self.serve((503, {'Retry-After': 'banana'}), OK)
        result, notices = self.call(api, 'GET', '/servers')
        self.assertNotIsInstance(result, cli_client.CLIError)
        self.assertEqual(2, len(api.seen))
        (notice,) = notices
        self.assertIn(f'retrying in {cli_client.UNREADABLE_RETRY_AFTER} s',
                      notice)
