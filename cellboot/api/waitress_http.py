"""waitress, made to answer like the API and to time out slow clients.

waitress reads every request in one asynchronous loop and hands only a
complete request (line, headers, body) to a worker thread, so a slow or
silent client costs a socket, never a worker. What it lacks is added
here by subclassing its server, channel and task classes (the class
attributes ``channel_class``, ``task_class`` and ``error_task_class``
are how waitress itself composes them):

* **JSON answers.** Every answer the server gives by itself (a
  malformed request line or header, a bad ``Content-Length``, bad
  chunking, a header or body over the limit, a timeout) is JSON in the
  API's error shape (``errors.error_response``), never waitress's plain
  text page. An unsupported transfer coding is a 400, not waitress's
  501: no input earns the client a 5xx.
* **A request timeout.** waitress closes a connection only after it has
  been silent for its whole channel timeout, so a client that drips one
  byte at a time keeps it for ever. ``HardenedServer.sweep`` gives each
  request ``request_timeout`` seconds from its first byte (and a new
  connection that many seconds to start one), then answers 408 and
  closes; a connection between requests is closed after
  ``idle_timeout`` seconds; a client that stops reading its answer is
  cut off after ``request_timeout`` seconds without progress.
* **Draining.** ``sweep(now, stopping=True)`` closes what is idle or
  incomplete at once and leaves a connection only while its request is
  being served; ``WSGIService`` stops when none is left.

``sweep`` runs in the loop's thread (as every change of a channel's
state must); the loop is ``cellboot.api.server.WSGIService``'s.
"""

import socket
import time

from waitress import channel as waitress_channel
from waitress import server as waitress_server
from waitress import task as waitress_task
from waitress import utilities

from cellboot.api import errors

# Seconds a connection closed after an answer keeps reading (and
# dropping) what the client still sends, so that its unread bytes do not
# make the kernel reset the connection before the client read the
# answer (a "lingering close").
LINGER_SECONDS = 2.0
# Longest piece of the parser's own message (which may quote the
# client's bytes) kept in an answer.
_MAX_DETAIL = 200


class RequestTimeout(utilities.Error):
    """The sweep's error for a request not received whole in time."""

    code = 408
    reason = 'Request Timeout'


def describe(error, adj):
    """(HTTP code, message) of a request waitress or the sweep refused."""
    detail = str(error.body)[:_MAX_DETAIL]
    if isinstance(error, RequestTimeout):
        return 408, (f'The request was not received completely within '
                     f'{detail} seconds ([api] request_timeout); send the '
                     f'request line, headers and whole body at once.')
    if isinstance(error, utilities.RequestHeaderFieldsTooLarge):
        return 431, (f'The request line and headers are over the limit of '
                     f'{adj.max_request_header_size} bytes.')
    if isinstance(error, utilities.RequestEntityTooLarge):
        # waitress refuses max_request_body_size bytes or more; the
        # server sets it one above [api] max_request_body_size.
        return 413, (f'The request body is over the limit of '
                     f'{adj.max_request_body_size - 1} bytes.')
    if isinstance(error, utilities.ServerNotImplemented):
        return 400, ('Unsupported Transfer-Encoding: only "chunked" is '
                     'accepted (or send a Content-Length).')
    if isinstance(error, utilities.BadRequest):
        return 400, f'Malformed HTTP request: {detail}.'
    return 500, ('Unexpected API error; the operator can find it in the '
                 'cellboot-api log.')


class JSONErrorTask(waitress_task.ErrorTask):
    """Answers a refused request in the API's JSON error shape."""

    def execute(self):
        code, message = describe(self.request.error, self.channel.adj)
        response = errors.error_response(code, message)
        body = response.body
        self.status = response.status
        self.response_headers.extend(
            (name, value) for name, value in response.headerlist
            if name.lower() != 'content-length')
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class ClosingWSGITask(waitress_task.WSGITask):
    """Closes the connection after a 411: the body that the client sent
    without saying its length cannot be told from its next request."""

    def build_response_header(self):
        if self.status.startswith('411'):
            self.set_close_on_finish()
        return super().build_response_header()


class HardenedChannel(waitress_channel.HTTPChannel):
    """One client connection; remembers what the sweep needs to know.

    ``answered``: a request was served on it (so it is idle between
    requests, not new); ``partial`` / ``partial_since``: the incomplete
    request the sweep last saw and since when (the loop's clock);
    ``lingering_since``: when its closing began (see ``handle_close``).
    """

    task_class = ClosingWSGITask
    error_task_class = JSONErrorTask
    answered = False
    partial = None
    partial_since = 0.0
    lingering_since = None

    def readable(self):
        if self.lingering_since is not None:
            return True
        # While the server drains, a kept-alive client's next request
        # is not read: the connection closes once its answer is out.
        return not self.server.draining and super().readable()

    def writable(self):
        return self.lingering_since is None and super().writable()

    def handle_read(self):
        if self.lingering_since is None:
            return super().handle_read()
        # Dropped; an end of stream or an error closes (wasyncore calls
        # handle_close, which then closes for good).
        self.recv(self.adj.recv_bytes)

    def handle_close(self):
        """Close once the answer is out: send FIN, linger, then close.

        waitress calls this when an answer that ends the connection has
        been flushed; the sweep closes the channel for good after
        ``LINGER_SECONDS`` (or the client's own close does).
        """
        if (self.lingering_since is not None or self.total_outbufs_len
                or not self.connected or self.server.draining):
            return self.close_now()
        try:
            self.socket.shutdown(socket.SHUT_WR)
        except OSError:
            return self.close_now()
        self.lingering_since = time.time()

    def close_now(self):
        """Close the connection at once, whatever it is doing."""
        self.lingering_since = None
        super().handle_close()

    def service(self):
        try:
            super().service()
        finally:
            self.answered = True

    def time_out(self, seconds):
        """Replace the incomplete request by a 408 answer, then close.

        Loop thread only. The 408 is queued as a request of its own, so
        a worker writes it as it writes any answer.
        """
        with self.requests_lock:
            partial = self.request
            if partial is None or self.requests:
                return
            version = partial.version if partial.headers_finished else '1.1'
            answer = self.parser_class(self.adj)
            answer.parse_header(
                b'GET / HTTP/' + version.encode('latin-1') + b'\r\n')
            answer.error = RequestTimeout(f'{seconds:g}')
            answer.completed = True
            partial.close()
            self.request = None
            self.requests.append(answer)
        self.server.add_task(self)


class HardenedServer(waitress_server.TcpWSGIServer):
    """waitress's TCP server with the channel above and ``sweep``.

    waitress's own idle check (``maintenance``) is replaced by
    ``sweep``, which ``WSGIService``'s loop calls: it must also run
    while stopping, when this listening socket is already closed.
    """

    channel_class = HardenedChannel
    draining = False

    def __init__(self, application, request_timeout, idle_timeout, **kw):
        self.request_timeout = request_timeout
        self.idle_timeout = idle_timeout
        super().__init__(application, **kw)

    def maintenance(self, now):
        pass

    def stop_accepting(self):
        """Close the listening socket and read no further request.

        The loop's wake-up pipe stays open: worker threads still use it.
        """
        self.draining = True
        self.accepting = False
        waitress_server.wasyncore.dispatcher.close(self)

    def sweep(self, now, stopping=False):
        """Time out, close idle or drain each channel; loop thread only.

        ``now`` is ``time.time()`` (waitress's clock for activity).
        """
        for channel in list(self.active_channels.values()):
            if channel.lingering_since is not None:
                if stopping or now - channel.lingering_since >= (
                        LINGER_SECONDS):
                    channel.close_now()
                continue
            if channel.requests:
                # Being served: the client waits for us, not we for it.
                channel.partial = None
                continue
            if (channel.total_outbufs_len or channel.will_close
                    or channel.close_when_flushed):
                # An answer still going out: close it only if the client
                # stopped reading (or the stop's grace is over).
                if now - channel.last_activity >= self.request_timeout:
                    channel.close_now()
                continue
            partial = channel.request
            if partial is None:
                limit = (self.idle_timeout if channel.answered
                         else self.request_timeout)
                if stopping or now - channel.last_activity >= limit:
                    channel.close_now()
                continue
            if stopping:
                channel.close_now()
            elif partial is not channel.partial:
                channel.partial, channel.partial_since = partial, now
            elif now - channel.partial_since >= self.request_timeout:
                channel.time_out(self.request_timeout)

    def close_all_channels(self):
        """Close every connection, whatever it is doing (loop thread)."""
        for channel in list(self.active_channels.values()):
            channel.close_now()
