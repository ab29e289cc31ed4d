"""The chaos scenario: boots through the REST API while conductors die.

A whole deployment in processes (``tests.functional.multiprocess``) on
MariaDB, a RabbitMQ vhost and a Redis namespace of its own: the API, 3
super conductors sharing a Redis jobboard, and 2 cells of a scheduler, a
cell conductor and 4 compute hosts each (fake driver, slow spawns, one
host per cell failing every build so that reschedules happen). The chaos
test adds ``FAILING_CELL``, of 2 hosts that fail every build, whose
builds move to another cell (``cells=CHAOS_CELLS``, ``EVEN_CELLS``).

``Chaos.run`` submits ``boots`` servers through ``POST /servers``
(singles and multi-creates, from several client threads, spread over
``submit_seconds``) while a killer thread SIGKILLs a randomly chosen
super conductor ``super_kills`` times, a cell conductor ``cell_kills``
times and a cell's scheduler ``scheduler_kills`` times, restarting each
after a short random pause. The
random choices come from one seeded RNG, so a failing seed can be
replayed (``CELLBOOT_CHAOS_SEED``). Then it waits, bounded, for
quiescence (``observe.look``) and gathers the figures of the run.

The durability options are short so that the mechanisms act within the
test: claims expire after ``CLAIM_EXPIRY`` s, the sweepers run every
``SWEEP_INTERVAL`` s, a build request without a flow is started after
``UNSTARTED_TIMEOUT`` s and an unowned flow handed over after
``ORPHAN_TIMEOUT`` s, a build no host took is sent again after
``NOT_TAKEN_TIMEOUT`` s, and a build stuck on a host times out after
``BUILD_TIMEOUT`` s.
"""

import collections
import glob
import os
import queue
import random
import shutil
import threading
import time

import requests

from tests.functional.chaos import observe
from tests.functional.chaos import plan as plan_mod
from tests.functional import invariants
from tests.functional.multiprocess import deployment as deployment_mod

CLAIM_EXPIRY = 8
# Seconds between two reloads of an in-process scheduler's host states: a
# super conductor that started before the compute hosts reported learns
# of them this soon.
HOST_STATE_REFRESH = 2
SWEEP_INTERVAL = 3
# Sweeps the invariant check gives the conductors to heal what they heal.
SETTLE_SWEEPS = 2
ORPHAN_TIMEOUT = 15
BUILD_TIMEOUT = 45
# A lost cast (a broker restart: make faults) is sent again this soon.
NOT_TAKEN_TIMEOUT = 10
UNSTARTED_TIMEOUT = 10
SPAWN_TIME = 0.2

CELLS = {cell: [f'{cell}-host{index}' for index in range(1, 5)]
         for cell in ('cell1', 'cell2')}
# The chaos run has a third cell, every host of which fails every build:
# its builds are handed back and moved to another cell (cross-cell
# flows) while conductors are killed.
FAILING_CELL = 'cell3'
CHAOS_CELLS = dict(CELLS, **{FAILING_CELL: [f'{FAILING_CELL}-host{index}'
                                            for index in (1, 2)]})
# The first host of each cell fails every build, reschedulably, and so
# does every host of the failing cell.
FAILING_HOSTS = [hosts[0] for hosts in CELLS.values()] + \
    CHAOS_CELLS[FAILING_CELL]
# With no weight, the API level picks at random among the cells that
# fit: about a third of the chaos run's boots start in the failing cell.
EVEN_CELLS = """
    [filter_scheduler]
    ram_weight_multiplier = 0
    cpu_weight_multiplier = 0
    disk_weight_multiplier = 0
    """

# The scheduler picks at random among every host (host_subset_size) and
# keeps trying the failing ones (no build-failure weight): about a
# quarter of the builds start on a failing host and are rescheduled,
# all through the run, so that a killed cell conductor meets some.
#
# The super conductors run the scheduler in-process ([conductor] scheduler
# = local), as docs/architecture.md advises with a jobboard: a killed
# conductor's scheduling dies with it, where an RPC call of a dead
# conductor still queued on cellboot-scheduler could claim hosts after a
# survivor's resumed schedule gave the dead run's claims back.
# Each cell's scheduler serves its cell conductor and compute hosts, and
# the super conductors; one that was killed is waited for
# CELL_CALL_TIMEOUT s before the next cell is asked.
CELL_CALL_TIMEOUT = 5
OPTIONS = f"""
    [scheduler]
    host_state_refresh_interval = {HOST_STATE_REFRESH}
    cell_call_timeout = {CELL_CALL_TIMEOUT}

    [filter_scheduler]
    host_subset_size = {sum(len(hosts) for hosts in CHAOS_CELLS.values())}
    build_failure_weight_multiplier = 0

    [jobboard]
    claim_expiry = {CLAIM_EXPIRY}

    [conductor]
    scheduler = local
    sweep_interval = {SWEEP_INTERVAL}
    orphan_build_request_timeout = {ORPHAN_TIMEOUT}
    unstarted_build_request_timeout = {UNSTARTED_TIMEOUT}
    build_not_taken_timeout = {NOT_TAKEN_TIMEOUT}
    build_timeout = {BUILD_TIMEOUT}

    # One project boots every server of the run: no quota may refuse it.
    [quota]
    instances = -1
    cores = -1
    ram = -1
    """

CELL_OPTIONS = f"""
    [fake_driver]
    spawn_time = {SPAWN_TIME}
    fail_hosts = {','.join(FAILING_HOSTS)}
    fail_mode = reschedule
    """

# Where to keep the services' logs after the run (default: nowhere).
KEEP_LOGS_VARIABLE = 'CELLBOOT_CHAOS_LOGS'

# Every server is booted by one user of one project (noauth2 token).
TOKEN = 'chaos:chaos-project'

# Seconds a POST /servers may take before the client gives up.
HTTP_TIMEOUT = 60
# A 503 is sent again after its Retry-After (at most MAX_RETRY_AFTER s),
# for at most UNAVAILABLE_FOR s in all.
MAX_RETRY_AFTER = 10
UNAVAILABLE_FOR = 90
# Seconds between two looks at the databases while waiting.
POLL_INTERVAL = 1.0

# Seconds after which an unchanged state in flight is stuck: a build
# times out build_timeout after its last change, found at the next sweep;
# a dead conductor's claim runs out after claim_expiry.
STALLED_AFTER = BUILD_TIMEOUT + 2 * SWEEP_INTERVAL + CLAIM_EXPIRY + 10


class Chaos:
    """One run of the scenario on a deployment made for it."""

    def __init__(self, test, redis, seed, boots=300, clients=4,
                 super_conductors=3, super_kills=5, cell_kills=2,
                 scheduler_kills=1,
                 submit_seconds=45, quiesce_timeout=150, cells=None,
                 options=''):
        """``cells``: ``{cell: [host, ...]}`` (``CELLS`` if not given);
        ``options``: configuration text added to ``OPTIONS`` (indented as
        it is)."""
        self.test = test
        self.cells = cells or CELLS
        self.options = OPTIONS + options
        self.redis = redis
        self.seed = seed
        self.healed = 0
        self.rng = random.Random(seed)
        self.boots = boots
        self.clients = clients
        self.super_conductors = super_conductors
        self.super_kills = super_kills
        self.cell_kills = cell_kills
        self.scheduler_kills = scheduler_kills
        self.submit_seconds = submit_seconds
        self.quiesce_timeout = quiesce_timeout
        self.accepted = []          # instance uuids answered 202
        self.refused = []           # (status, body) of any other answer
        self.unavailable = 0        # 503s answered (each sent again)
        self.kills = []             # Kill, as done
        self.deployment = None
        # More keyword arguments of the Deployment (a subclass's).
        self.deployment_options = {}
        self.phases = {}            # phase name: seconds it took
        self._lock = threading.Lock()

    def timed(self, phase, function, *args):
        """Run ``function(*args)``, noting in ``phases`` how long it took."""
        started = time.monotonic()
        try:
            return function(*args)
        finally:
            self.phases[phase] = round(time.monotonic() - started, 1)

    # -- the deployment ------------------------------------------------------

    def deploy(self):
        self.deployment = self.test.useFixture(deployment_mod.Deployment(
            self.test, backend='mysql', cells=self.cells,
            cell_options=CELL_OPTIONS, options=self.options,
            super_conductors=self.super_conductors, jobboard=self.redis,
            api=True, **self.deployment_options))
        keep = os.environ.get(KEEP_LOGS_VARIABLE)
        if keep:
            self.test.addCleanup(self._keep_logs, keep)
        # Every super conductor's host states have been reloaded since
        # the last compute host reported.
        time.sleep(HOST_STATE_REFRESH + 1)
        return self.deployment

    def _keep_logs(self, directory):
        """Copy every service's log to ``directory`` (for a post-mortem)."""
        os.makedirs(directory, exist_ok=True)
        for path in glob.glob(os.path.join(self.deployment.dir, '*.log')):
            shutil.copy(path, directory)

    # -- load ----------------------------------------------------------------

    def _submit(self, timetable, started):
        session = requests.Session()
        session.headers['X-Auth-Token'] = TOKEN
        while True:
            try:
                at, size = timetable.get_nowait()
            except queue.Empty:
                return
            pause = started + at - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            server = {'name': f'chaos-{size}', 'flavorRef':
                      deployment_mod.FLAVOR['flavorid'],
                      'imageRef': 'cirros'}
            if size > 1:
                server.update(min_count=size, max_count=size)
            try:
                answer = self._post(session, server)
            except requests.RequestException as exc:
                with self._lock:
                    self.refused.append((None, str(exc)))
                continue
            with self._lock:
                if answer.status_code != 202:
                    self.refused.append((answer.status_code, answer.text))
                    continue
                body = answer.json()
                if 'servers' in body:
                    self.accepted.extend(s['id'] for s in body['servers'])
                else:
                    self.accepted.append(body['server']['id'])

    def _post(self, session, server):
        """POST /servers, sent again after each 503 as its Retry-After
        says (as the CLI does), for at most ``UNAVAILABLE_FOR`` s; each
        503 is counted in ``unavailable``."""
        give_up = time.monotonic() + UNAVAILABLE_FOR
        while True:
            answer = session.post(f'{self.deployment.api_url}/servers',
                                  json={'server': server},
                                  timeout=HTTP_TIMEOUT)
            if answer.status_code != 503 or time.monotonic() > give_up:
                return answer
            with self._lock:
                self.unavailable += 1
            try:
                pause = float(answer.headers.get('Retry-After', 1))
            except ValueError:
                pause = 1.0
            time.sleep(min(max(pause, 0.1), MAX_RETRY_AFTER))

    def _aim(self, service):
        """Wait (bounded) until ``service`` runs a flow; how many it runs."""
        in_flight = plan_mod.FlowsInFlight(service.log_path)
        deadline = time.monotonic() + plan_mod.AIM_SECONDS
        while True:
            running = in_flight()
            if running or time.monotonic() > deadline:
                return len(running)
            time.sleep(plan_mod.AIM_POLL)

    def _kill_all(self, plan, started):
        for kill in plan:
            pause = started + kill.at - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            kill.in_flight = self._aim(self.deployment.service(kill.service))
            kill.at = round(time.monotonic() - started, 1)
            self.deployment.kill(kill.service)
            time.sleep(kill.down)
            # Waits until it serves again: never two of a kind down.
            self.deployment.restart(kill.service)
            self.kills.append(kill)

    def load_and_kill(self):
        """Submit every boot while the plan of kills runs; both bounded."""
        plan = plan_mod.kill_plan(
            self.rng, self.deployment.super_conductor_names, list(self.cells),
            self.super_kills, self.cell_kills,
            (2.0, self.submit_seconds + 10.0),
            scheduler_kills=self.scheduler_kills)
        return self.load_while(lambda started: self._kill_all(plan, started))

    def load_while(self, disturb):
        """Submit every boot while ``disturb(started)`` runs in a thread of
        its own (``started``: the load's monotonic start); both bounded.
        What ``disturb`` raises is raised here once the load is done."""
        sizes = plan_mod.request_sizes(self.rng, self.boots)
        timetable = queue.Queue()
        for index, size in enumerate(sizes):
            timetable.put((self.submit_seconds * index / len(sizes), size))
        started = time.monotonic()
        threads = [threading.Thread(target=self._submit,
                                    args=(timetable, started), daemon=True)
                   for _ in range(self.clients)]
        failure = []

        def disturb_noting_failure():
            try:
                disturb(started)
            except Exception as exc:     # reported by the test
                failure.append(exc)
        disturber = threading.Thread(target=disturb_noting_failure,
                                     daemon=True)
        for thread in threads + [disturber]:
            thread.start()
        for thread in threads:
            thread.join()
        self.phases['submit'] = round(time.monotonic() - started, 1)
        disturber.join()
        if failure:
            raise failure[0]
        return sizes

    # -- the end -------------------------------------------------------------

    def wait_quiet(self):
        """Wait until nothing is in flight; the last look if it never is.

        Gives up early when what is in flight has not changed for
        ``STALLED_AFTER`` s: by then every mechanism would have acted.
        """
        deadline = time.monotonic() + self.quiesce_timeout
        last, changed = None, time.monotonic()
        while True:
            seen = observe.look(self.redis.client, self.redis.namespace)
            now = time.monotonic()
            if str(seen) != last:
                last, changed = str(seen), now
            if seen.quiet or now > deadline or now - changed > STALLED_AFTER:
                return seen
            time.sleep(POLL_INTERVAL)

    def taken_over(self):
        """Flows that more than one process logged as RUNNING.

        Read from the logs, not the flow meta: a flow whose conductor
        died before it persisted anything of the run is taken over
        without a resumption on record.
        """
        runners = collections.defaultdict(set)
        for service in self.deployment.processes.services:
            try:
                with open(service.log_path, 'rb') as log:
                    text = log.read()
            except OSError:
                continue
            for label, state in plan_mod.FLOW_STATE.findall(text):
                if state == b'RUNNING':
                    runners[label].add(service.log_path)
        return [label.decode() for label, logs in runners.items()
                if len(logs) > 1]

    def servers(self):
        """Every server of the project as the REST API shows it."""
        answer = requests.get(f'{self.deployment.api_url}/servers/detail',
                              headers={'X-Auth-Token': TOKEN},
                              timeout=HTTP_TIMEOUT)
        answer.raise_for_status()
        return answer.json()['servers']

    def summary(self, violations, duration):
        all_flows = observe.flows()
        states = observe.instance_states()
        return {
            'boots': len(self.accepted),
            'kills': len(self.kills),
            'resumed_flows': len(observe.resumed_flows(all_flows)),
            'taken_over_flows': len(self.taken_over()),
            'reschedules': len(observe.reschedule_flows(all_flows)),
            'moves': len(observe.cross_cell_flows(all_flows)),
            'active': states.get('active', 0),
            'error': states.get('error', 0),
            'violations': len(violations),
            'healed_by_sweeps': self.healed,
            'seed': self.seed,
            'duration_s': round(duration, 1),
            'killed': dict(collections.Counter(k.service
                                               for k in self.kills)),
            'kills_mid_flow': sum(1 for k in self.kills if k.in_flight),
            'phases_s': self.phases,
        }

    def check(self):
        """The invariants' violations, once the sweeps had their turn.

        Some of what a fault leaves is healed by a sweep only: a claim a
        message delivered again re-made off an ACTIVE instance's host
        (``cellboot.conductor.stray_claims``). A first look that finds
        violations is made again after ``SETTLE_SWEEPS`` sweeps; what it
        found is counted (``healed_by_sweeps``), what remains is failed.
        """
        found = invariants.check_invariants()
        if found:
            time.sleep(SETTLE_SWEEPS * SWEEP_INTERVAL + 1)
            remaining = invariants.check_invariants()
            self.healed = len(found) - len(remaining)
            return remaining
        return found
