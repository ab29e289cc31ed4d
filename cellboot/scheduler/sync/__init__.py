"""Schedulers of one cell kept in sync through a change feed.

A cell may run several schedulers (``cellboot-scheduler --cell NAME``
on several hosts, or one per super conductor of a one-process
deployment), each with the cell's host states in its own memory. Their
claims are compare-and-swap checked in the cell's database, so none can
over-commit a host, but without news of the others' claims each decides
on stale figures until its periodic reload, and loses claims to them.

So every scheduler writes what it changes to a feed -- the providers it
claimed on, released or updated, and the hosts' build-failure counts
(``BuildFailureWeigher``), which live only in the schedulers' memory --
and pulls what the others wrote before its next decision (``Follower``),
re-reading only the providers named. The feed is not a fan-out of
RPC casts (a scheduler that is down or slow misses nothing: it reads on
from its position) and not a full reload.

Two backends (``[scheduler] sync_backend``):

* ``database`` (default): a table of the cell's own database
  (``resources.changes``), written in the transaction of the claim
  itself, so that a committed change is always announced. No new
  service; a cell's feed is only its own schedulers'.
* ``redis``: a Redis stream per cell, written after the commit.

While the feed cannot be reached, the schedulers rely on the periodic
reload and the claims' swaps, which stay correct; once it is back each
reloads in full (changes were missed) and follows the feed again.
"""

import collections
import uuid

from cellboot.conf import CONF
from cellboot.conf import scheduler as scheduler_conf

# One entry of a feed: ``kind`` is ``usage`` (re-read provider ``key``)
# or ``build`` (provider ``key`` has ``value`` consecutive build
# failures); ``origin`` names the scheduler that wrote it, ``at`` when
# (epoch seconds).
Change = collections.namedtuple('Change', 'kind key value origin at')


def for_cell(cache, origin=None):
    """The ``Follower`` of a cell's host states, or None (no feed)."""
    # Imported here: each backend needs only its own client library.
    from cellboot.scheduler.sync import follower
    backend = CONF.scheduler.sync_backend
    if backend == scheduler_conf.SYNC_DATABASE:
        from cellboot.scheduler.sync import database
        feed = database.DatabaseFeed(cache.scope)
    elif backend == scheduler_conf.SYNC_REDIS:
        from cellboot.scheduler.sync import redis_feed
        feed = redis_feed.RedisFeed(cache.scope)
    else:
        return None
    return follower.Follower(cache, feed,
                             origin or uuid.uuid4().hex)
