"""The change feed as a table of the cell's own database.

Sequence numbers are handed out when a transaction inserts its row, not
when it commits: on MariaDB and PostgreSQL a claim holding sequence 7
may commit after one holding 8 was read. A reader that just moved past 8
would miss 7 for ever. So every sequence skipped below the highest one
read is kept as missing and asked for again at each pull, until it
shows up or ``[scheduler] sync_gap_wait`` seconds have passed. Then it
is either a transaction that rolled back after its insert (rare: the
row is written once the claim's swap succeeded) or rows trimmed before
this scheduler read them: the caller cannot tell, and reloads in full
(``overflow``). SQLite commits one writer at a time and never leaves
such a gap open.
"""

import time

from cellboot.conf import CONF
from cellboot.scheduler.resources import changes
from cellboot.scheduler import sync

# Missing sequences followed at most: a larger hole is taken as missed
# changes (a full reload) rather than asked for.
MAX_MISSING = 1000


class DatabaseFeed:
    """One scheduler's position in its cell's ``scheduler_changes``."""

    # The claims, releases and provider updates write their own rows.
    in_transaction = True

    def __init__(self, scope):
        self.scope = scope
        self._after = None
        self._missing = {}   # sequence -> monotonic time first missed
        self._read = None    # changes.PinnedRead, made at the first pull

    def start(self, context):
        """Follow from the current tail on."""
        self._after = changes.tail(self.scope.context(context))
        self._missing = {}

    def pull(self, context):
        """``(changes, overflow)``: what was written since the last pull.

        ``overflow``: more than ``[scheduler] sync_max_entries`` were
        waiting, or changes may have been missed (see the module); the
        caller reloads in full and calls ``start`` again.
        """
        limit = CONF.scheduler.sync_max_entries
        cctxt = self.scope.context(context)
        if self._read is None:
            self._read = changes.PinnedRead(cctxt)
        rows = changes.by_seq(self._read(self._after, limit),
                              changes.read_missing(cctxt, self._missing))
        now = time.monotonic()
        past = 0
        lost = False
        for row in rows:
            if row.seq <= self._after:
                self._missing.pop(row.seq, None)
                continue
            past += 1
            if row.seq - self._after - 1 <= MAX_MISSING - len(self._missing):
                for seq in range(self._after + 1, row.seq):
                    self._missing[seq] = now
            else:
                lost = True
            self._after = row.seq
        wait = CONF.scheduler.sync_gap_wait
        for seq, since in list(self._missing.items()):
            if now - since > wait:
                del self._missing[seq]
                lost = True
        return ([sync.Change(row.kind, row.key, row.value, row.origin,
                             row.at) for row in rows],
                lost or past >= limit)

    def close(self):
        """Give the pinned read's connection back (the scheduler stops)."""
        read, self._read = self._read, None
        if read is not None:
            read.close()

    def publish(self, context, entries, origin):
        """Write ``(kind, key, value)`` entries that no claim wrote."""
        changes.record(self.scope.context(context), entries, origin)

    def trim(self, context):
        """Delete what is older than ``[scheduler] sync_retention``."""
        return changes.trim(self.scope.context(context),
                            time.time() - CONF.scheduler.sync_retention)
