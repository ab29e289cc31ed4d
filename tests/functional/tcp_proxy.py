"""A TCP proxy the test controls: a database outage without touching it.

The machine's database servers are shared with the tests running beside
this one, so an outage is made between cellboot and the server instead:
``TCPProxy`` forwards a loopback port to the server, and makes it
unreachable in one of the two ways a network fails:

* ``cut()`` — the way a stopped or failed-over server looks: the
  listener is closed (new connections are refused) and every forwarded
  connection is dropped (the client reads an end of stream);
* ``black_hole()`` — the way a partition looks: nothing is refused and
  nothing is dropped, but nothing gets through either. New connections
  are accepted (the server's greeting never comes), bytes already sent
  wait in the proxy and the kernel's buffers. A client learns of it only
  through its own timeouts.

``restore()`` ends either: after a cut, it listens on the same port
again, as a restarted server does; after a black hole, what waited is
forwarded, as after a healed partition (connections whose client gave
up meanwhile end then).

One thread accepts; each forwarded connection has a thread that connects
upstream (once traffic flows) and two pumping threads, one per
direction, which end when either side closes.
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
        # Set while traffic flows; cleared by black_hole().
        self._flowing = threading.Event()
        self._flowing.set()
        self.accepted = 0

    # -- control -----------------------------------------------------------

    @property
    def black_holed(self):
        return not self._flowing.is_set()

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
        # Threads held by a black hole wake up and find their sockets
        # closed.
        self._flowing.set()

    def black_hole(self):
        """Accept, forward nothing, drop nothing, until ``restore()``."""
        self._flowing.clear()

    def restore(self):
        """Listen again on the same port; forward what waited."""
        self._flowing.set()
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
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    return
                self._sockets.add(client)
                self.accepted += 1
            threading.Thread(target=self._connect, args=(client,),
                             daemon=True).start()

    def _connect(self, client):
        """Connect upstream once traffic flows, then pump both ways."""
        self._flowing.wait()
        try:
            upstream = socket.create_connection(self.target, timeout=5)
            upstream.settimeout(None)
        except OSError:
            self._close(client)
            return
        with self._lock:
            if client not in self._sockets:  # cut meanwhile
                upstream.close()
                return
            self._sockets.add(upstream)
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(source, sink),
                             daemon=True).start()

    def _pump(self, source, sink):
        try:
            while True:
                # Under a black hole nothing is read: the kernel's
                # buffers fill and the sender blocks, as across a
                # partition.
                self._flowing.wait()
                data = source.recv(_CHUNK)
                if not data:
                    break
                self._flowing.wait()
                sink.sendall(data)
        except OSError:
            pass
        finally:
            # The other direction ends too: a half-open connection is
            # of no use to a database client.
            self._close(source, sink)

    def _close(self, *socks):
        for sock in socks:
            _shut(sock)
        with self._lock:
            for sock in socks:
                self._sockets.discard(sock)
        for sock in socks:
            sock.close()


def _shut(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


# The server's port when a database URL names none.
DEFAULT_PORTS = {'mysql': 3306, 'postgresql': 5432}


def in_front_of(url):
    """``(proxy, proxied_url)``: a started proxy to ``url``'s server.

    ``proxied_url`` is ``url`` with the proxy's address, password kept;
    the caller stops the proxy once nothing uses the URL any more.
    """
    from sqlalchemy.engine import url as sa_url

    parsed = sa_url.make_url(url)
    proxy = TCPProxy(parsed.host or '127.0.0.1',
                     parsed.port or DEFAULT_PORTS[parsed.get_backend_name()])
    proxy.start()
    return proxy, parsed.set(host='127.0.0.1', port=proxy.port) \
        .render_as_string(hide_password=False)
