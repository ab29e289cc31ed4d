"""Claims racing from many threads and processes never over-commit.

One provider has room for exactly N instances; 3N consumers claim it at
once. Exactly N must win, each with its whole claim, and the other 2N
must be refused with ClaimFailed.

``claim_retries`` is set to N: every generation conflict of a claim means
another claim succeeded during that attempt, so no claim can conflict
more than N times, and a claim gives up only if capacity is gone. With
fewer retries a claim may lose every round to its peers (ClaimConflict)
while room is left, which is correct behaviour but would make "exactly N
placed" a matter of timing.
"""

import collections
import multiprocessing
import queue
import threading

from oslo_utils import uuidutils
from testtools import content

from cellboot import context
from cellboot import exception
from cellboot.scheduler.resources import claims
from cellboot.scheduler.resources import contention
from cellboot.scheduler.resources import usage
from tests import base
from tests.functional.scheduler import resources_base as rb

INSTANCE = {'VCPU': 2, 'MEMORY_MB': 1024}
WAIT_SECONDS = 60


def provider_for(instances):
    """Inventory with room for exactly ``instances`` of INSTANCE."""
    return {'VCPU': {'total': 2 * instances},
            'MEMORY_MB': {'total': 1024 * instances + 512}}


def claim_from_threads(provider_uuid, consumers, threads):
    """Claim INSTANCE for every consumer, ``threads`` at a time.

    Returns the tallies: placed consumers, refusals, give-ups, unexpected
    errors, and this process's contention counters.
    """
    tally = {'placed': [], 'failed': 0, 'gave_up': 0, 'errors': []}
    lock = threading.Lock()
    start = threading.Barrier(threads)

    def claim_slice(mine):
        ctx = context.get_admin_context()
        start.wait(WAIT_SECONDS)
        for consumer in mine:
            try:
                claims.claim_resources(ctx, consumer, provider_uuid, INSTANCE)
                outcome = ('placed', consumer)
            except exception.ClaimFailed:
                outcome = ('failed', 1)
            except exception.ClaimConflict:
                outcome = ('gave_up', 1)
            except Exception as exc:  # reported, and fails the test
                outcome = ('errors', repr(exc))
            with lock:
                if isinstance(tally[outcome[0]], list):
                    tally[outcome[0]].append(outcome[1])
                else:
                    tally[outcome[0]] += outcome[1]

    workers = [threading.Thread(target=claim_slice,
                                args=(consumers[i::threads],))
               for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(WAIT_SECONDS)
    tally['stats'] = contention.STATS.snapshot()
    return tally


def _claiming_process(cell_url, retries, provider_uuid, consumers, threads,
                      barrier, results):
    """Entry point of a claiming process."""
    from cellboot.conf import CONF

    CONF([], project='cellboot', default_config_files=[])
    # A cell's scheduler: its cell's database is its own.
    CONF.set_override('connection', cell_url, group='database')
    CONF.set_override('claim_retries', retries, group='scheduler')
    try:
        barrier.wait(WAIT_SECONDS)
        results.put(claim_from_threads(provider_uuid, consumers, threads))
    except Exception as exc:
        results.put({'placed': [], 'failed': 0, 'gave_up': 0,
                     'errors': [repr(exc)], 'stats': {}})


def merge(tallies):
    merged = {'placed': [], 'failed': 0, 'gave_up': 0, 'errors': [],
              'stats': collections.Counter()}
    for tally in tallies:
        for key in ('placed', 'failed', 'gave_up', 'errors'):
            merged[key] += tally[key]
        merged['stats'].update(tally['stats'])
    return merged


class _RaceTests:

    def _race(self, instances, run):
        """Set up a provider for ``instances``, run the race, check it."""
        rp = self.create_provider(provider_for(instances))
        consumers = [uuidutils.generate_uuid() for _ in range(3 * instances)]
        self.flags(claim_retries=instances, group='scheduler')
        tally = run(rp, consumers)
        self.addDetail('contention', content.text_content(
            f'{self.BACKEND}: {dict(tally["stats"])}'))
        print(f'\n{self.id()}: {dict(tally["stats"])}')

        self.assertEqual([], tally['errors'])
        self.assertEqual((instances, 2 * instances, 0),
                         (len(tally['placed']), tally['failed'],
                          tally['gave_up']))
        rows = self.allocation_rows()
        holders = collections.defaultdict(dict)
        for consumer, rc, used in rows:
            holders[consumer][rc] = used
        self.assertEqual(sorted(tally['placed']), sorted(holders))
        for consumer, held in holders.items():
            self.assertEqual(INSTANCE, held, consumer)
        self.assertEqual({rp: {'VCPU': 2 * instances,
                               'MEMORY_MB': 1024 * instances}},
                         usage.get_usages(self.ctx, [rp]))
        return tally

    def test_threads_claiming_one_provider_never_over_commit(self):
        self._race(20, lambda rp, consumers: claim_from_threads(
            rp, consumers, threads=12))

    def test_processes_claiming_one_provider_never_over_commit(self):
        self._race(25, lambda rp, consumers: self._in_processes(
            rp, consumers, processes=4, threads=6))

    def _in_processes(self, rp, consumers, processes, threads):
        # Children fork from a clean single-threaded server that imported
        # this module once, instead of each importing it (spawn, seconds
        # per child) or inheriting the test runner's threads and
        # connections (fork).
        forkserver = multiprocessing.get_context('forkserver')
        forkserver.set_forkserver_preload([__name__])
        barrier = forkserver.Barrier(processes)
        results = forkserver.Queue()
        children = [forkserver.Process(
            target=_claiming_process,
            args=(self.dbs.cell_urls[0], len(consumers) // 3, rp,
                  consumers[i::processes], threads, barrier, results))
            for i in range(processes)]
        for child in children:
            child.start()
        self.addCleanup(self._reap, children)
        tallies = []
        for _ in children:
            try:
                tallies.append(results.get(timeout=WAIT_SECONDS))
            except queue.Empty:
                self.fail('a claiming process did not report in time')
        return merge(tallies)

    @staticmethod
    def _reap(children):
        for child in children:
            child.join(10)
            if child.is_alive():
                child.kill()


class SQLiteClaimRaceTest(_RaceTests, base.SQLiteMixin,
                          rb.ResourcesTestCase):
    pass


class MySQLClaimRaceTest(_RaceTests, base.MySQLMixin, rb.ResourcesTestCase):
    pass


class PostgreSQLClaimRaceTest(_RaceTests, base.PostgreSQLMixin,
                              rb.ResourcesTestCase):
    pass
