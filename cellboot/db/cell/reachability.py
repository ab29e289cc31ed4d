"""Which cell databases this process found not answering, until they do.

A partitioned cell costs whoever waits for it: a server listing waits
``[api] list_cell_timeout`` for a silent cell at every request, and the
API level's read of the cells' aggregates ``[scheduler]
cell_check_timeout``. Once one
call found the cell down, the next ones need not find out again.
``scatter_gather_cells`` (``cellboot.context``) therefore tells this
registry how each call to a cell ended:

* a cell that answered (a result, or an error of its own such as
  InstanceNotFound: the server spoke) is **up**;
* a cell that did not answer within the caller's timeout, or whose
  connection failed (``DBConnectionError``: refused, dropped, timed
  out), is **down** from then on.

A caller that opts in (``skip_down_cells``) gets a down cell's answer at
once, as if it had timed out, and the cell is still called, in the
background, once at a time: that call is how the cell is found up again
(its result is dropped; the next caller reads the cell as usual). So no
request waits on a known-down cell, a silent cell holds at most one
thread of the process (and one of its pooled connections) however many
requests come, and a cell is back within one call of its return.

The registry is per process and in memory: what one process saw of a
cell says nothing of another's network. It never forgets a down cell by
itself; a cell nobody calls any more is called again, and found up, the
next time someone asks.
"""

import collections
import threading
import time


class Reachability:
    """Down cells and the calls in flight to each, behind one lock."""

    def __init__(self):
        self._lock = threading.Lock()
        self._down = {}     # cell uuid: (cell name, monotonic since, why)
        self._calls = collections.Counter()   # cell uuid: calls running

    def is_down(self, cell_uuid):
        return cell_uuid in self._down

    def down_cells(self):
        """``{cell uuid: cell name}`` of the cells found down."""
        with self._lock:
            return {uuid: name for uuid, (name, _since, _why)
                    in self._down.items()}

    def start_call(self, cell_uuid, skip_if_down):
        """Count a call about to start; False when it must not start.

        With ``skip_if_down``, a down cell already being called is not
        called again (False): that call will tell whether it is back.
        """
        with self._lock:
            if skip_if_down and cell_uuid in self._down and \
                    self._calls[cell_uuid]:
                return False
            self._calls[cell_uuid] += 1
            return True

    def end_call(self, cell_uuid):
        with self._lock:
            self._calls[cell_uuid] -= 1
            if not self._calls[cell_uuid]:
                del self._calls[cell_uuid]

    def calls_in_flight(self, cell_uuid):
        with self._lock:
            return self._calls[cell_uuid]

    def answered(self, cell_uuid, cell_name):
        """The cell answered a call: up.

        Returns the seconds it had been down, None if it was not: the
        caller logs the change (its logger is the one operators tune).
        """
        with self._lock:
            was = self._down.pop(cell_uuid, None)
        return None if was is None else time.monotonic() - was[1]

    def not_answered(self, cell_uuid, cell_name, why):
        """A call found the cell unreachable: down (since the first).

        Returns True when the cell was up until now.
        """
        with self._lock:
            was = self._down.get(cell_uuid)
            since = was[1] if was is not None else time.monotonic()
            self._down[cell_uuid] = (cell_name, since, why)
        return was is None


# The process's registry.
CELLS = Reachability()
