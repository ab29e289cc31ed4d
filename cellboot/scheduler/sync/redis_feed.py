"""The change feed as a Redis stream, one per cell.

For deployments that run Redis already (``[jobboard] backend = redis``)
and would rather not write a feed row in every claim's transaction.
Entries are added after the claim committed (XADD, the stream capped at
about ten times ``[scheduler] sync_max_entries``) and read past the last
id seen (XREAD without blocking: a decision never waits for the feed).
A scheduler that dies between its commit and its XADD leaves that claim
unannounced: the others see it at their next reload or failed claim,
as without a feed; the claims stay checked in the database.

A reader left behind by more than the cap (a scheduler with nothing to
decide for long) loses the oldest entries to the trim, but then finds a
full pull (``sync_max_entries``) waiting, which is the overflow that
reloads every host: trimmed entries are never skipped silently. A Redis
that restarts without persistence forgets the stream: what the readers
had not pulled yet is lost, and they drift until their periodic reload
(the claims' swaps stay exact).
"""

import time

import redis

from cellboot.conf import CONF
from cellboot.scheduler import sync

KEY_PREFIX = 'cellboot:scheduler-changes:'
# A feed that does not answer at once is taken for down: decisions
# must not wait on it.
SOCKET_TIMEOUT = 0.5


class RedisFeed:
    """One scheduler's position in its cell's Redis stream."""

    in_transaction = False

    def __init__(self, scope, client=None):
        self.scope = scope
        self.key = KEY_PREFIX + str(scope.key)
        self._client = client
        self._after = None

    @property
    def client(self):
        if self._client is None:
            self._client = redis.Redis.from_url(
                CONF.scheduler.sync_redis_url,
                socket_timeout=SOCKET_TIMEOUT,
                socket_connect_timeout=SOCKET_TIMEOUT)
        return self._client

    def close(self):
        """Close the client's connections (the scheduler stops)."""
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def start(self, context):
        last = self.client.xrevrange(self.key, count=1)
        self._after = last[0][0] if last else b'0-0'

    def pull(self, context):
        """``(changes, overflow)``, as ``DatabaseFeed.pull``."""
        limit = CONF.scheduler.sync_max_entries
        answer = self.client.xread({self.key: self._after}, count=limit)
        entries = answer[0][1] if answer else []
        if entries:
            self._after = entries[-1][0]
        return ([_change(fields) for _id, fields in entries],
                len(entries) >= limit)

    def publish(self, context, entries, origin):
        now = repr(time.time())
        with self.client.pipeline(transaction=False) as pipe:
            for kind, key, value in entries:
                pipe.xadd(self.key, {
                    'kind': kind, 'key': key,
                    'value': '' if value is None else str(value),
                    'origin': origin, 'at': now,
                }, maxlen=10 * CONF.scheduler.sync_max_entries,
                   approximate=True)
            pipe.execute()

    def trim(self, context):
        """Nothing: XADD caps the stream."""
        return 0


def _change(fields):
    text = {k.decode(): v.decode() for k, v in fields.items()}
    return sync.Change(text['kind'], text['key'], text['value'] or None,
                       text['origin'], float(text['at']))
