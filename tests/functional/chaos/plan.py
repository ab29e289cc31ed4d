"""The chaos test's plan: what to submit, whom to kill and when.

Everything here is drawn from the run's seeded RNG, so that a failing
seed replays the same plan (``CELLBOOT_CHAOS_SEED``); only the timing of
a replay differs.
"""

import dataclasses
import re

from tests.functional.multiprocess import deployment as deployment_mod

# Most requests are singles; the others multi-creates of 2 to 5.
SINGLE_SHARE = 0.6
LARGEST_MULTI_CREATE = 5

# A kill is aimed: from its planned time, wait up to AIM_SECONDS for the
# victim to have a flow in flight (its log says the flow is RUNNING and
# has not ended), so that the crash interrupts work rather than an idle
# process; if none shows up, kill it anyway.
AIM_SECONDS = 4.0
AIM_POLL = 0.02
# How the flow listener logs a flow's state changes.
FLOW_STATE = re.compile(rb'Flow \S+ \((.+?)\): ([A-Z]+)')
FLOW_ENDED = (b'SUCCESS', b'REVERTED', b'FAILURE')


@dataclasses.dataclass
class Kill:
    """One planned crash: at ``at`` s, ``service`` is down ``down`` s.

    ``in_flight``: the flows its log showed running when it was killed.
    """

    at: float
    service: str
    down: float
    in_flight: int = 0


class FlowsInFlight:
    """The flows a service's log shows running, read as the log grows."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.states = {}
        self._partial = b''

    def __call__(self):
        with open(self.path, 'rb') as log:
            log.seek(self.offset)
            chunk = log.read()
        self.offset += len(chunk)
        lines = (self._partial + chunk).split(b'\n')
        self._partial = lines.pop()
        for line in lines:
            found = FLOW_STATE.search(line)
            if found:
                self.states[found.group(1)] = found.group(2)
        return [label for label, state in self.states.items()
                if state not in FLOW_ENDED]


def request_sizes(rng, boots):
    """Sizes of the POST /servers requests that add up to ``boots``."""
    sizes = []
    left = boots
    while left:
        size = 1
        if rng.random() >= SINGLE_SHARE:
            size = rng.randint(2, LARGEST_MULTI_CREATE)
        size = min(size, left)
        sizes.append(size)
        left -= size
    return sizes


def kill_plan(rng, super_conductors, cells, super_kills, cell_kills,
              window, scheduler_kills=0):
    """When to kill whom, sorted by time, within ``window`` (start, end).

    Targets are drawn at random (a super conductor may die twice in a
    row); the times are spread evenly with jitter, so that every crash
    meets flows in flight rather than bunching up.
    """
    targets = ([rng.choice(super_conductors) for _ in range(super_kills)] +
               [deployment_mod.Deployment.cell_conductor_name(
                   rng.choice(cells)) for _ in range(cell_kills)] +
               [deployment_mod.Deployment.cell_scheduler_name(
                   rng.choice(cells)) for _ in range(scheduler_kills)])
    rng.shuffle(targets)
    start, end = window
    slot = (end - start) / max(len(targets), 1)
    return [Kill(at=start + slot * (index + rng.uniform(0.1, 0.9)),
                 service=target, down=rng.uniform(0.5, 3.0))
            for index, target in enumerate(targets)]
