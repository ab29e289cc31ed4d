"""One background step repeated at an interval, for the schedulers.

A cell scheduler reloads its host states and publishes its aggregate,
the API level re-reads the cells' aggregates: each is a step that runs
every few seconds in a daemon thread until the scheduler stops, and
whose failure (a database that is down now) must not end the thread,
since the next step may succeed. This is that loop, once.
"""

import threading


class Periodic:
    """Run ``step()`` every ``interval`` seconds until ``stop``.

    A step that raises is handed to ``failed(exc, interval)`` (to log
    it, in the caller's words) and the next runs on time. ``start`` with
    an interval of 0 or None starts nothing: the option that disables
    the loop.
    """

    def __init__(self, name, step, failed):
        self.name = name
        self._step = step
        self._failed = failed
        self._stop = threading.Event()
        self._thread = None

    def start(self, interval):
        if not interval or self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, args=(interval,),
                                        name=self.name, daemon=True)
        self._thread.start()

    def _run(self, interval):
        while not self._stop.wait(interval):
            try:
                self._step()
            except Exception as exc:
                self._failed(exc, interval)

    def stop(self):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
