"""A flow kind of the fencing tests' own, whose steps leave traces.

``fencetest`` flows run through cellboot's runner, jobboard and engine
like boot flows, on a flow database of the test's; what differs is only
their three steps (``before``, ``stall``, ``after``), which make their
side effect in the flow database itself, under the run's fence
(``Fence.holding``): one row in ``fencetest_effects`` per step run, and
a result naming the conductor and the token of the run that recorded
it. ``stall`` can be held (``Stalls``) inside its ``execute``, as a
process starved of CPU or waiting on a slow call would be, either
before its side effect or after it.
"""

import threading

import fixtures
import sqlalchemy as sa
from taskflow.patterns import linear_flow
from taskflow import task

from cellboot import context as cb_context
from cellboot.flowrun import kinds
from cellboot.flowrun import records
from cellboot.flowrun import runner as flow_runner

KIND = 'fencetest'
STEPS = ('before', 'stall', 'after')
# Seconds a stalled step waits for the test at most (never reached
# unless the test fails).
STALL_LIMIT = 60

_METADATA = sa.MetaData()
EFFECTS = sa.Table(
    'fencetest_effects', _METADATA,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('step', sa.String(16), nullable=False),
    sa.Column('by', sa.String(64), nullable=False),
    sa.Column('token', sa.BigInteger, nullable=False),
)


class Stalls:
    """Where a conductor's ``stall`` step stops, and its release.

    ``hold(name, effect_first)`` makes conductor ``name``'s ``stall``
    step stop inside ``execute``: after its side effect if
    ``effect_first``, else before it. ``reached[name]`` is set once it
    stopped there; ``release(name)`` lets it go on.
    """

    def __init__(self):
        self.reached = {}
        self._go = {}
        self._effect_first = {}

    def hold(self, name, effect_first=False):
        self.reached[name] = threading.Event()
        self._go[name] = threading.Event()
        self._effect_first[name] = effect_first

    def release(self, name):
        self._go[name].set()

    def release_all(self):
        for event in self._go.values():
            event.set()

    def effect_first(self, name):
        return self._effect_first.get(name, False)

    def stop_here(self, name):
        if name in self._go:
            self.reached[name].set()
            self._go[name].wait(STALL_LIMIT)


def record(fence, step, by):
    """The step's side effect, under the fence; its result."""
    with fence.holding() as conn:
        conn.execute(sa.insert(EFFECTS).values(step=step, by=by,
                                               token=fence.token))
    return {'by': by, 'token': fence.token}


class Step(task.Task):
    def execute(self, fence, conductor_name, stalls):
        return record(fence, self.name, conductor_name)


class Stall(task.Task):
    def execute(self, fence, conductor_name, stalls):
        if stalls.effect_first(conductor_name):
            result = record(fence, self.name, conductor_name)
            stalls.stop_here(conductor_name)
            return result
        stalls.stop_here(conductor_name)
        return record(fence, self.name, conductor_name)


def get_flow():
    return linear_flow.Flow(KIND).add(
        Step('before'), Stall('stall'), Step('after'))


class Kind(fixtures.Fixture):
    """Registers the ``fencetest`` kind (a super conductors' kind)."""

    def _setUp(self):
        self.useFixture(fixtures.MockPatchObject(
            kinds, 'KINDS', dict(kinds.KINDS,
                                 **{KIND: kinds.Kind(get_flow, kinds.SUPER)})))


def create_effects_table(url):
    engine = sa.create_engine(url)
    try:
        _METADATA.create_all(engine)
    finally:
        engine.dispose()


def effects(url):
    """``[(step, by, token)]`` in the order they were recorded."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(
                sa.select(EFFECTS.c.step, EFFECTS.c.by, EFFECTS.c.token)
                .order_by(EFFECTS.c.id))]
    finally:
        engine.dispose()


def runner(url, name, stalls):
    """A runner of ``fencetest`` flows named ``name``, on ``url``."""
    run = flow_runner.Runner(
        KIND, kinds.SUPER, lambda: url,
        lambda context: {'conductor_name': name, 'stalls': stalls})
    run.owner = name
    return run


def start(run, key):
    """Start (or post) a ``fencetest`` flow with ``run``; its uuid."""
    ctx = cb_context.RequestContext(user_id='u', project_id='p')
    run.start(ctx, {}, [], key, f'fencetest {key}')
    return records.flow_uuid(KIND, key)
