"""What the MariaDB server says about connections and statements.

``Connections`` (the number of connection attempts since the server
started) and ``Threads_connected`` (connections open now) are
server-wide: another test suite on the same server counts too, which is
why the benchmark reports them beside its own figures rather than as
the deployment's alone. They are read through one connection of the
benchmark's own, opened before the first sample and kept, so that the
monitor adds nothing to the ``Connections`` delta (it is itself one of
the ``Threads_connected``).

``ConnectionMonitor`` polls ``Threads_connected`` in a thread to catch
its peak: a sampled peak, so a spike shorter than the interval can be
missed.
"""

import threading

import pymysql
import sqlalchemy as sa

# Seconds between two looks at Threads_connected.
POLL_INTERVAL = 0.2


def connect(url):
    """A PyMySQL connection to the server of SQLAlchemy URL ``url``."""
    url = sa.engine.make_url(url)
    return pymysql.connect(host=url.host or '127.0.0.1',
                           port=url.port or 3306, user=url.username,
                           password=url.password or '', autocommit=True,
                           connect_timeout=10)


class ConnectionMonitor:
    """``Connections`` deltas and the peak ``Threads_connected``."""

    def __init__(self, url):
        self._conn = connect(url)
        self._lock = threading.Lock()
        self._peak = 0
        self._stop = threading.Event()
        self._thread = None
        self.max_connections = int(self._variable('max_connections'))

    def _query(self, sql, name):
        with self._lock, self._conn.cursor() as cursor:
            cursor.execute(sql, (name,))
            row = cursor.fetchone()
        return row[1]

    def _variable(self, name):
        return self._query('SHOW GLOBAL VARIABLES LIKE %s', name)

    def _status(self, name):
        return int(self._query('SHOW GLOBAL STATUS LIKE %s', name))

    def connections(self):
        """Connection attempts since the server started (server-wide)."""
        return self._status('Connections')

    def statements(self):
        """``(Questions, Com_admin_commands)`` since the server started.

        Statements clients sent, and the commands that are none (a
        ping is one): server-wide, this monitor's own polls included
        (five a second).
        """
        return (self._status('Questions'),
                self._status('Com_admin_commands'))

    def threads_connected(self):
        return self._status('Threads_connected')

    def start_peak(self):
        """Start (again) looking for the peak of Threads_connected."""
        self.stop_peak()
        self._peak = self.threads_connected()
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, daemon=True,
                                        name='threads-connected')
        self._thread.start()

    def _watch(self):
        while not self._stop.wait(POLL_INTERVAL):
            try:
                seen = self.threads_connected()
            except pymysql.MySQLError:
                continue        # a blip of the server: look again
            self._peak = max(self._peak, seen)

    def stop_peak(self):
        """Stop looking; the peak seen since ``start_peak``."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        return self._peak

    def close(self):
        self.stop_peak()
        self._conn.close()
