"""What ``cellboot.api.waitress_http`` relies on in waitress, beyond its
documented API: fails, naming the piece, the day a waitress release
changes it (the hostile HTTP tests would fail too, less clearly)."""

from waitress import adjustments
from waitress import channel
from waitress import parser
from waitress import server
from waitress import task
from waitress import utilities

from tests import base


class WaitressContractTest(base.TestCase):

    def test_the_channel_attributes_the_sweep_reads_and_sets(self):
        for name in ('task_class', 'error_task_class', 'parser_class',
                     'request', 'will_close', 'close_when_flushed',
                     'total_outbufs_len', 'last_activity', 'service',
                     'received', 'handle_close', 'readable', 'writable'):
            self.assertTrue(hasattr(channel.HTTPChannel, name), name)
        self.assertIs(task.WSGITask, channel.HTTPChannel.task_class)
        self.assertIs(task.ErrorTask, channel.HTTPChannel.error_task_class)

    def test_the_server_composes_its_channel_and_sweeps_in_maintenance(self):
        self.assertIs(channel.HTTPChannel, server.TcpWSGIServer.channel_class)
        for name in ('maintenance', 'pull_trigger', 'accepting'):
            self.assertTrue(hasattr(server.BaseWSGIServer, name), name)

    def test_a_request_can_be_made_an_error_answer(self):
        request = parser.HTTPRequestParser(adjustments.Adjustments())
        request.parse_header(b'GET / HTTP/1.1\r\n')
        self.assertEqual('1.1', request.version)
        self.assertFalse(request.headers_finished)
        request.error = utilities.BadRequest('x')
        request.completed = True
        request.close()

    def test_the_error_classes_and_their_codes(self):
        self.assertEqual(400, utilities.BadRequest.code)
        self.assertEqual(413, utilities.RequestEntityTooLarge.code)
        self.assertEqual(431, utilities.RequestHeaderFieldsTooLarge.code)
        self.assertEqual(501, utilities.ServerNotImplemented.code)
        for name in ('set_close_on_finish', 'build_response_header',
                     'write', 'execute'):
            self.assertTrue(hasattr(task.ErrorTask, name), name)

    def test_the_dispatcher_starts_and_stops_its_threads(self):
        dispatcher = task.ThreadedTaskDispatcher()
        dispatcher.set_thread_count(1)
        self.assertEqual(1, len(dispatcher.threads))
        dispatcher.shutdown(timeout=5)
        self.assertEqual(0, len(dispatcher.threads))
