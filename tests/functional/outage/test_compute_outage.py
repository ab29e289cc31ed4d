"""A compute host whose cell database goes away while it builds.

The cell database is cut while the host spawns (the fake driver takes
``SPAWN_SECONDS``) and comes back ``OUTAGE_SECONDS`` later: the spawn
ends during the outage, so the host's final write (ACTIVE, its event,
the action) meets it. The host rides it out and the server ends ACTIVE
with its one claim. A cut before the host took the build makes its
first write (the take) ride it out too.
"""

import time

import sqlalchemy as sa

from cellboot.db.cell import models as cell_models
from cellboot.objects import instance as instance_obj
from tests.functional.outage import base

SPAWN_SECONDS = 1.0

_INSTANCES = cell_models.Instance.__table__


class ComputeOutageTest(base.OutageTestCase):
    """On MariaDB."""

    CUT = ('cell1',)

    def setUp(self):
        super().setUp()
        self.flags(spawn_time=SPAWN_SECONDS, group='fake_driver')

    def wait_until_spawning(self, uuids, timeout=30):
        """Until every instance is spawning, read around the proxy."""
        engine = sa.create_engine(self.cluster.direct_urls['cell1'])
        self.addCleanup(engine.dispose)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with engine.connect() as conn:
                spawning = conn.execute(
                    sa.select(sa.func.count()).select_from(_INSTANCES).where(
                        _INSTANCES.c.uuid.in_(uuids),
                        _INSTANCES.c.task_state ==
                        instance_obj.task_states.SPAWNING)).scalar()
            if spawning == len(uuids):
                return
            time.sleep(0.02)
        self.fail(f'{uuids} were not all spawning within {timeout} s')

    def test_the_final_write_rides_out_the_outage(self):
        uuids = self.cluster.boot(count=2)
        self.wait_until_spawning(uuids)
        self.cut()
        self.restore_after(base.OUTAGE_SECONDS)
        self.wait_for_quiet()
        self.assert_active(uuids)
        self.assert_rode_it_out()
        self.assertIn('cellboot.compute', self.log.output)

    def test_the_take_rides_out_the_outage(self):
        # Cut as the host receives the build (the hook only times the
        # cut; the host's own code handles the message): its first
        # write, the take, meets the outage.
        (manager,) = self.cluster.computes.values()
        receive = manager.build_and_run_instance

        def cut_then_receive(*args, **kwargs):
            self.cut_for()
            return receive(*args, **kwargs)

        manager.build_and_run_instance = cut_then_receive
        self.addCleanup(vars(manager).pop, 'build_and_run_instance', None)
        uuids = self.cluster.boot(count=1)
        self.wait_for_quiet()
        self.assert_active(uuids)
        self.assert_rode_it_out()


class PostgreSQLComputeOutageTest(ComputeOutageTest):
    """The same on PostgreSQL."""

    BACKEND = 'postgresql'
