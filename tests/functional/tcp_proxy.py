"""A TCP proxy the test controls: a database outage without touching it.

The machine's database servers are shared with the tests running beside
this one, so an outage is made between cellboot and the server instead:
``TCPProxy`` forwards a loopback port to the server, and ``cut()`` makes
the server unreachable the way a stopped or failed-over one is — the
listener is closed (new connections are refused) and every forwarded
connection is dropped (the client reads an end of stream). ``restore()``
listens on the same port again, as a restarted server does.

One thread accepts; each forwarded connection has two pumping threads,
one per direction, which end when either side closes.
"""

import socket
import threading

_CHUNK = 65536


class TCPProxy:
    """Forwards ``127.0.0.1:port`` to ``(host, target_port)``."""

    def __init__(self, host, target_port):
        self.target = (host, target_port)
        self.port = 0
        self._lock = threading.Lock()
        self._sockets = set()
        self._listener = None
        self._acceptor = None
        self.accepted = 0

    # -- control -----------------------------------------------------------

    def start(self):
        """Listen (on a free port the first time, the same one after)."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(('127.0.0.1', self.port))
        listener.listen(128)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._acceptor = threading.Thread(
            target=self._accept, args=(listener,), daemon=True,
            name=f'tcp-proxy-{self.port}')
        self._acceptor.start()
        return self

    def cut(self):
        """Refuse new connections and drop the forwarded ones."""
        listener, self._listener = self._listener, None
        if listener is not None:
            # shutdown() wakes the thread blocked in accept() (Linux).
            _shut(listener)
            listener.close()
            self._acceptor.join(timeout=5)
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            _shut(sock)
            sock.close()

    def restore(self):
        """Listen again on the same port."""
        if self._listener is None:
            self.start()

    stop = cut

    # -- forwarding ----------------------------------------------------------

    def _accept(self, listener):
        while True:
            try:
                client, _address = listener.accept()
            except OSError:
                return  # cut
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    upstream.close()
                    return
                self._sockets.update((client, upstream))
                self.accepted += 1
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink),
                                 daemon=True).start()

    def _pump(self, source, sink):
        try:
            while True:
                data = source.recv(_CHUNK)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            # The other direction ends too: a half-open connection is
            # of no use to a database client.
            for sock in (source, sink):
                _shut(sock)
            with self._lock:
                self._sockets.discard(source)
                self._sockets.discard(sink)
            source.close()


def _shut(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
