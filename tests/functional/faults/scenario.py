"""One infrastructure fault under the chaos test's load.

The chaos deployment (``tests.functional.chaos.scenario``: MariaDB, a
RabbitMQ vhost, a Redis namespace, 3 super conductors, 2 cells of a
cell conductor and 4 compute hosts) takes ``BOOTS`` servers over REST in
``SUBMIT_SECONDS`` s, no conductor killed; ``FAULT_AT`` s into the load
one fault strikes: a server of the machine stopped and restarted
(``services``), or one cell's database cut off by the TCP proxy it is
reached through. The client sends a request answered 503 again after
its ``Retry-After``, as the CLI does, and counts the 503s.

Then, as in the chaos test, it waits for quiescence and checks the
invariants; ``summary`` adds what the fault cost: the 503s, the extra
casts (builds sent again to their host because their first cast was
lost, and boot flows started by the orphan sweep), reschedules, and the
time from the fault's end to quiet.
"""

import collections
import re
import time

import sqlalchemy as sa

from cellboot.conductor import untaken_builds
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from tests.functional.chaos import observe
from tests.functional.chaos import scenario as chaos_scenario
from tests.functional.faults import services

BOOTS = 150
SUBMIT_SECONDS = 45
# Seconds into the load at which the fault strikes: builds of every
# stage are in flight by then.
FAULT_AT = 15

# Seconds the API may take to list a healed cell's servers again.
LISTED_WITHIN = 15

# The boot casts the orphan sweep made again, as its log says.
_ORPHAN_STARTED = re.compile(rb'have no flow after .* starting it')


class FaultRun(chaos_scenario.Chaos):
    """The chaos deployment under load while ``fault`` strikes once.

    ``fault(run)`` does the damage and undoes it; it returns the seconds
    the damage lasted (the server unreachable, the cell cut off).
    """

    def __init__(self, test, redis, seed, name, fault, boots=BOOTS,
                 proxied_cells=()):
        super().__init__(test, redis, seed, boots=boots, super_kills=0,
                         cell_kills=0, scheduler_kills=0,
                         submit_seconds=SUBMIT_SECONDS)
        self.name = name
        self.fault = fault
        self.down_s = None
        self.fault_ended = None
        self.quiet_after = None
        if proxied_cells:
            self.deployment_options['proxied_cells'] = list(proxied_cells)

    def load_with_fault(self):
        """Submit every boot; ``FAULT_AT`` s in, the fault strikes."""
        def strike(started):
            pause = started + FAULT_AT - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            try:
                self.down_s = self.fault(self)
            finally:
                self.fault_ended = time.monotonic()
        return self.load_while(strike)

    def wait_quiet(self):
        seen = super().wait_quiet()
        if seen.quiet and self.fault_ended is not None:
            self.quiet_after = round(time.monotonic() - self.fault_ended, 1)
        return seen

    def servers(self):
        """Every server as the API lists it, once it lists none UNKNOWN.

        An API process that found a cell down skips it until a
        background call finds it back (``cellboot.db.cell.reachability``):
        the first listings after a partition heals may still show that
        cell's servers UNKNOWN. Bounded by ``LISTED_WITHIN`` s; the last
        listing is returned either way (and judged by the test).
        """
        deadline = time.monotonic() + LISTED_WITHIN
        while True:
            servers = super().servers()
            if (time.monotonic() > deadline or
                    all(s['status'] != 'UNKNOWN' for s in servers)):
                return servers
            time.sleep(1)

    def dead_services(self):
        """The services of the deployment that are not running any more."""
        return sorted(service.name
                      for service in self.deployment.processes.services
                      if not service.alive())

    @staticmethod
    def resends():
        """Builds sent again by the cell conductors, by event name: to the
        same host (``recast``) or rescheduled off a dead one
        (``not_taken``), as their instance actions record them."""
        events = cell_models.Base.metadata.tables['instance_actions_events']
        names = {untaken_builds.EVENT_RECAST: 'recast',
                 untaken_builds.EVENT_NOT_TAKEN: 'not_taken'}
        counts = collections.Counter()
        for url in observe.cell_urls().values():
            with cell_connection.get_engine(url).connect() as conn:
                for row in conn.execute(
                        sa.select(events.c.event, sa.func.count())
                        .where(events.c.event.in_(list(names)))
                        .group_by(events.c.event)):
                    counts[names[row[0]]] += row[1]
        return {name: counts[name] for name in names.values()}

    def _logged(self, pattern):
        count = 0
        for service in self.deployment.processes.services:
            try:
                with open(service.log_path, 'rb') as log:
                    count += len(pattern.findall(log.read()))
            except OSError:
                continue
        return count

    def summary(self, violations, duration):
        summary = super().summary(violations, duration)
        for key in ('kills', 'killed', 'kills_mid_flow', 'resumed_flows',
                    'taken_over_flows'):
            summary.pop(key, None)
        server_errors = [status for status, _body in self.refused
                         if status is not None and status >= 500]
        return {'fault': self.name, 'down_s': self.down_s,
                **summary,
                '5xx': len(server_errors),
                '503': self.unavailable,
                'refused': len(self.refused),
                'resent_builds': self.resends(),
                'orphans_started': self._logged(_ORPHAN_STARTED),
                'quiet_after_fault_s': self.quiet_after,
                'dead_services': self.dead_services()}


# -- the faults ---------------------------------------------------------

def restart(server, seconds):
    """The fault of stopping ``server`` for ``seconds``, then starting
    it; never left down (``services.outage``)."""
    def fault(run):
        return services.outage(server, seconds)
    return fault


def partition(cell, seconds):
    """The fault of cutting ``cell``'s database off for ``seconds``."""
    def fault(run):
        proxy = run.deployment.cell_proxy(cell)
        proxy.cut()
        cut_at = time.monotonic()
        try:
            time.sleep(seconds)
        finally:
            proxy.restore()
        return round(time.monotonic() - cut_at, 1)
    return fault
