"""Generation conflicts, forced deterministically between read and swap.

The test hook wraps the claim's read of the provider: right after the
claim has read the generation, inventories and usages, the hook moves the
generation on, as a concurrent claim would. On MariaDB and PostgreSQL the
hook writes through another connection, a real concurrent writer. On
SQLite the claim already holds the database's write lock at that point
(its writer began with ``BEGIN IMMEDIATE``,
``facade.take_sqlite_write_lock``), so no other connection can write; the
hook moves the generation through the claim's own transaction instead,
which the failed swap then rolls back.
"""

from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models
from cellboot import exception
from cellboot.scheduler.resources import claims
from cellboot.scheduler.resources import contention
from tests import base
from tests.functional.scheduler import resources_base as rb

_PROVIDERS = models.ResourceProvider.__table__


class _ConflictTests:

    def setUp(self):
        super().setUp()
        self.rp = self.create_provider()
        self.consumer = uuidutils.generate_uuid()
        self.interferences = 0

    def interfere(self, times):
        """Move the generation after the claim's first ``times`` reads."""
        original = claims._read_provider_state

        def read_then_interfere(context, provider_uuid, consumer_uuid,
                                store):
            state = original(context, provider_uuid, consumer_uuid, store)
            if self.interferences < times:
                self.interferences += 1
                if self.BACKEND == 'sqlite':
                    context.session.execute(sa.update(_PROVIDERS).where(
                        _PROVIDERS.c.uuid == provider_uuid,
                    ).values(generation=_PROVIDERS.c.generation + 1))
                else:
                    self.bump_generation(provider_uuid)
            return state

        self.patch(claims, '_read_provider_state', read_then_interfere)

    def test_exhausted_retries_raise_claim_conflict(self):
        self.flags(claim_retries=2, group='scheduler')
        self.interfere(times=1000)
        exc = self.assertRaises(exception.ClaimConflict,
                                claims.claim_resources, self.ctx,
                                self.consumer, self.rp, rb.SMALL)
        self.assertIn('3 times in a row', str(exc))
        self.assertEqual(3, self.interferences)
        self.assertEqual(3, contention.STATS.snapshot()[
            'generation_conflicts'])
        self.assertEqual([], self.allocation_rows(self.consumer))

    def test_zero_retries_give_up_at_the_first_conflict(self):
        self.flags(claim_retries=0, group='scheduler')
        self.interfere(times=1000)
        self.assertRaises(exception.ClaimConflict, claims.claim_resources,
                          self.ctx, self.consumer, self.rp, rb.SMALL)
        self.assertEqual(1, self.interferences)

    def test_conflict_is_retried_against_fresh_data(self):
        self.interfere(times=2)
        self.assertTrue(claims.claim_resources(self.ctx, self.consumer,
                                               self.rp, rb.SMALL))
        self.assertEqual(2, contention.STATS.snapshot()[
            'generation_conflicts'])
        self.assertEqual(3, len(self.allocation_rows(self.consumer)))

    def test_swap_after_conflict_moves_the_latest_generation_on(self):
        before = self.generation(self.rp)
        self.interfere(times=1)
        claims.claim_resources(self.ctx, self.consumer, self.rp, rb.SMALL)
        # The concurrent change survives on a server database (+1) and is
        # rolled back on SQLite; the claim adds one either way.
        outside = 0 if self.BACKEND == 'sqlite' else 1
        self.assertEqual(before + outside + 1, self.generation(self.rp))


class SQLiteConflictTest(_ConflictTests, base.SQLiteMixin,
                         rb.ResourcesTestCase):
    pass


class MySQLConflictTest(_ConflictTests, base.MySQLMixin,
                        rb.ResourcesTestCase):
    pass


class PostgreSQLConflictTest(_ConflictTests, base.PostgreSQLMixin,
                             rb.ResourcesTestCase):
    pass


class MariaDBSnapshotIsolationConflictTest(_ConflictTests, base.MySQLMixin,
                                           rb.ResourcesTestCase):
    """MariaDB 10.6.18+/11.6 can refuse the swap with error 1020 instead.

    With ``innodb_snapshot_isolation`` on (the default from 11.6), an
    UPDATE of a row changed since the transaction's snapshot fails with
    "Record has changed since last read"; it must count as a generation
    conflict, not as an error.
    """

    def setUp(self):
        super().setUp()
        url = sa.engine.make_url(self.dbs.cell_urls[0]).update_query_dict(
            {'init_command': 'SET SESSION innodb_snapshot_isolation=ON'})
        self._require_snapshot_isolation(url)
        # The claims write the cell's database: the local one.
        self.flags(connection=url.render_as_string(hide_password=False),
                   group='database')
        cell_connection.reset()

    def _require_snapshot_isolation(self, url):
        engine = sa.create_engine(url)
        try:
            with engine.connect() as conn:
                conn.execute(sa.text('SELECT 1'))
        except sa.exc.DBAPIError as exc:
            self.skipTest(f'this MariaDB has no innodb_snapshot_isolation: '
                          f'{exc.orig}')
        finally:
            engine.dispose()
