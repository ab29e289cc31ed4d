"""A raw-socket HTTP client for the hostile tests: what no library sends.

``Connection`` sends any bytes, in any pieces, and reads answers one by
one (keep-alive and pipelining included), each with a deadline, so that
a server that does not answer fails the test instead of hanging it.
"""

import json
import socket
import time

# Seconds one blocking receive waits at most (the deadlines are longer).
_POLL = 0.2


class Answer:
    """One HTTP answer: status code, headers (lower-case names), body."""

    def __init__(self, status_line, headers, body):
        self.status_line = status_line
        self.code = int(status_line.split()[1])
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f'<Answer {self.status_line!r} {self.body[:200]!r}>'


class Closed(AssertionError):
    """The server closed the connection where an answer was expected."""


class NoAnswer(AssertionError):
    """No (whole) answer came before the deadline."""


class Connection:
    """One TCP connection to ``port`` on the loopback."""

    def __init__(self, port, host='127.0.0.1'):
        self.sock = socket.create_connection((host, port), timeout=30)
        self.sock.settimeout(_POLL)
        self._buffer = b''
        self.eof = False

    def send(self, data):
        self.sock.sendall(data)

    def try_send(self, data):
        """Send; False if the server has closed or reset the connection."""
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            return False

    def close(self):
        self.sock.close()

    def _fill(self, deadline):
        """Read more into the buffer; False once the deadline passed."""
        while time.monotonic() < deadline:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                self.eof = True
                return False
            if not data:
                self.eof = True
                return False
            self._buffer += data
            return True
        return False

    def answer(self, within):
        """The next whole answer, read within ``within`` seconds."""
        deadline = time.monotonic() + within
        while b'\r\n\r\n' not in self._buffer:
            if not self._fill(deadline):
                self._fail(within)
        head, rest = self._buffer.split(b'\r\n\r\n', 1)
        lines = head.decode('latin-1').split('\r\n')
        headers = {}
        for line in lines[1:]:
            name, value = line.split(':', 1)
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get('content-length', 0))
        while len(rest) < length:
            if not self._fill(deadline):
                self._fail(within)
            rest = self._buffer.split(b'\r\n\r\n', 1)[1]
        self._buffer = rest[length:]
        return Answer(lines[0], headers, rest[:length])

    def _fail(self, within):
        if self.eof:
            raise Closed(f'closed by the server; unparsed: '
                         f'{self._buffer[:200]!r}')
        raise NoAnswer(f'no whole answer within {within} s; got '
                       f'{self._buffer[:200]!r}')

    def closed_within(self, seconds):
        """True if the server closes (after any answer) within
        ``seconds``; what it sends meanwhile is kept for ``answer``."""
        deadline = time.monotonic() + seconds
        while not self.eof and self._fill(deadline):
            pass
        return self.eof


def request(method, path, headers=(), body=b'', length=True,
            version='1.1'):
    """The bytes of one request; ``length``: add a Content-Length."""
    lines = [f'{method} {path} HTTP/{version}', 'Host: 127.0.0.1']
    lines += [f'{name}: {value}' for name, value in headers]
    if length:
        lines.append(f'Content-Length: {len(body)}')
    return ('\r\n'.join(lines) + '\r\n\r\n').encode('latin-1') + body


def chunked(*pieces):
    """A chunked body of ``pieces`` (bytes), with its last chunk."""
    out = b''
    for piece in pieces:
        out += b'%x\r\n%s\r\n' % (len(piece), piece)
    return out + b'0\r\n\r\n'
