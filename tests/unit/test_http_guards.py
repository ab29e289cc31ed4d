"""The guards in front of the API: 411 without a length, 503 past the pool."""

import threading
import time

import webob

from cellboot.api import http_guards
from tests import base


def ok_app(environ, start_response):
    start_response('200 OK', [('Content-Type', 'text/plain')])
    return [b'ok']


class LengthRequiredTest(base.TestCase):

    def call(self, method, protocol='HTTP/1.1', **headers):
        request = webob.Request.blank('/v2.1/servers', method=method)
        request.environ['SERVER_PROTOCOL'] = protocol
        request.environ.pop('CONTENT_LENGTH', None)
        request.environ.update(headers)
        return request.get_response(http_guards.LengthRequired(ok_app))

    def test_a_post_put_or_patch_without_a_length_is_411(self):
        for method in ('POST', 'PUT', 'PATCH'):
            response = self.call(method)
            self.assertEqual(411, response.status_int)
            self.assertEqual(411, response.json['lengthRequired']['code'])

    def test_a_length_or_an_http_1_1_chunked_body_passes(self):
        self.assertEqual(200, self.call('POST', CONTENT_LENGTH='0')
                         .status_int)
        self.assertEqual(200, self.call(
            'POST', HTTP_TRANSFER_ENCODING='Chunked').status_int)

    def test_chunked_in_http_1_0_is_no_length(self):
        self.assertEqual(411, self.call(
            'POST', protocol='HTTP/1.0',
            HTTP_TRANSFER_ENCODING='chunked').status_int)

    def test_methods_without_a_body_need_no_length(self):
        for method in ('GET', 'DELETE', 'HEAD'):
            self.assertEqual(200, self.call(method).status_int)


class Held:
    """An application whose requests wait until ``release`` is set."""

    def __init__(self):
        self.inside = threading.Semaphore(0)
        self.release = threading.Event()

    def __call__(self, environ, start_response):
        self.inside.release()
        self.release.wait(60)
        return ok_app(environ, start_response)


class AdmissionLimitTest(base.TestCase):

    def call(self, application):
        """The response, its body read and closed as a server does."""
        status, headers, body = webob.Request.blank('/').call_application(
            application)
        try:
            content = b''.join(body)
        finally:
            if hasattr(body, 'close'):
                body.close()
        return webob.Response(status=status, headerlist=headers,
                              body=content)

    def in_background(self, application, held):
        """``application`` called in a thread; at clean-up ``held`` is
        released and the thread joined."""
        result = {}
        thread = threading.Thread(
            target=lambda: result.update(response=self.call(application)),
            daemon=True)
        thread.start()
        self.addCleanup(thread.join, 60)
        self.addCleanup(held.release.set)
        return thread, result

    def test_past_the_limit_with_no_room_to_wait_is_503_at_once(self):
        held = Held()
        guard = http_guards.AdmissionLimit(held, limit=1, wait=60,
                                           waiting=0)
        self.in_background(guard, held)
        self.assertTrue(held.inside.acquire(timeout=30))
        started = time.monotonic()
        response = self.call(guard)
        # Far less than the 60 s it would have waited for a slot.
        self.assertLess(time.monotonic() - started, 30)
        self.assertEqual(503, response.status_int)
        self.assertEqual('1', response.headers['Retry-After'])
        self.assertEqual(503, response.json['serviceUnavailable']['code'])
        self.assertEqual(1, guard.shed)

    def test_a_waiting_request_gets_the_slot_freed_within_the_wait(self):
        held = Held()
        guard = http_guards.AdmissionLimit(held, limit=1, wait=60)
        first, _ = self.in_background(guard, held)
        self.assertTrue(held.inside.acquire(timeout=30))
        second, result = self.in_background(guard, held)
        held.release.set()
        first.join(30)
        second.join(30)
        self.assertEqual(200, result['response'].status_int)
        self.assertEqual(0, guard.shed)

    def test_a_request_that_waited_too_long_is_503(self):
        held = Held()
        guard = http_guards.AdmissionLimit(held, limit=1, wait=0.01)
        self.in_background(guard, held)
        self.assertTrue(held.inside.acquire(timeout=30))
        self.assertEqual(503, self.call(guard).status_int)

    def test_the_slot_is_held_until_the_body_is_closed(self):
        guard = http_guards.AdmissionLimit(ok_app, limit=1, wait=0,
                                           waiting=0)
        body = guard(webob.Request.blank('/').environ,
                     lambda status, headers, exc_info=None: None)
        self.assertEqual(503, self.call(guard).status_int)
        self.assertEqual([b'ok'], list(body))
        body.close()
        self.assertEqual(200, self.call(guard).status_int)

    def test_the_slot_is_freed_when_the_application_raises(self):
        def failing(environ, start_response):
            raise RuntimeError('boom')

        guard = http_guards.AdmissionLimit(failing, limit=1, wait=0,
                                           waiting=0)
        self.assertRaises(RuntimeError, self.call, guard)
        guard.application = ok_app
        self.assertEqual(200, self.call(guard).status_int)
