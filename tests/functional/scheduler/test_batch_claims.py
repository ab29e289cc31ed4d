"""A multi-create's claims in one transaction: all of them, or none."""

from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.cell import connection as cell_connection
from cellboot.scheduler.resources import batch_claims
from cellboot.scheduler.resources import claims
from tests import base
from tests.functional.scheduler import resources_base as rb


class _BatchClaimTests:

    def setUp(self):
        super().setUp()
        self.rp1 = self.create_provider()
        self.rp2 = self.create_provider()
        self.commits = []
        engine = cell_connection.get_engine(self.dbs.cell_urls[0])
        sa.event.listen(engine, 'commit', self._count)
        self.addCleanup(sa.event.remove, engine, 'commit', self._count)

    def _count(self, conn):
        self.commits.append(1)

    def consumers(self, count):
        return [uuidutils.generate_uuid() for _ in range(count)]

    def test_every_claim_is_written_in_one_transaction(self):
        first, second, third = self.consumers(3)

        batch_claims.claim_all(self.ctx, [(first, self.rp1),
                                          (second, self.rp1),
                                          (third, self.rp2)], rb.SMALL)

        self.assertEqual(1, len(self.commits))
        for consumer in (first, second, third):
            self.assertEqual(3, len(self.allocation_rows(consumer)))
        # Each provider swapped once.
        self.assertEqual(2, self.generation(self.rp1))
        self.assertEqual(2, self.generation(self.rp2))

    def test_a_batch_that_overfills_a_provider_writes_nothing(self):
        # Room for 4 SMALL on a host: 5 do not fit.
        consumers = self.consumers(5)

        self.assertRaises(batch_claims.NotBatchable, batch_claims.claim_all,
                          self.ctx, [(c, self.rp1) for c in consumers],
                          rb.SMALL)

        self.assertEqual([], self.allocation_rows())
        self.assertEqual(1, self.generation(self.rp1))

    def test_a_batch_filling_a_provider_exactly_fits(self):
        consumers = self.consumers(4)

        batch_claims.claim_all(self.ctx, [(c, self.rp1) for c in consumers],
                               rb.SMALL)

        self.assertEqual(12, len(self.allocation_rows()))

    def test_usage_of_others_counts(self):
        claims.claim_resources(self.ctx, uuidutils.generate_uuid(), self.rp1,
                               rb.SMALL)

        self.assertRaises(batch_claims.NotBatchable, batch_claims.claim_all,
                          self.ctx, [(c, self.rp1)
                                     for c in self.consumers(4)], rb.SMALL)

    def test_a_consumer_holding_allocations_is_not_batched(self):
        held, fresh = self.consumers(2)
        claims.claim_resources(self.ctx, held, self.rp1, rb.SMALL)

        self.assertRaises(batch_claims.NotBatchable, batch_claims.claim_all,
                          self.ctx, [(held, self.rp2), (fresh, self.rp2)],
                          rb.SMALL)

        self.assertEqual([], self.allocation_rows(fresh))

    def test_an_unknown_provider_is_not_batched(self):
        self.assertRaises(batch_claims.NotBatchable, batch_claims.claim_all,
                          self.ctx, [(self.consumers(1)[0],
                                      uuidutils.generate_uuid())], rb.SMALL)

    def test_max_unit_applies_per_instance_not_to_the_sum(self):
        rp = self.create_provider({'VCPU': {'total': 16, 'max_unit': 4}})

        batch_claims.claim_all(self.ctx, [(c, rp)
                                          for c in self.consumers(4)],
                               {'VCPU': 4})

        self.assertEqual(4, len(self.allocation_rows()))


class SQLiteBatchClaimTest(_BatchClaimTests, base.SQLiteMixin,
                           rb.ResourcesTestCase):
    pass


class MySQLBatchClaimTest(_BatchClaimTests, base.MySQLMixin,
                          rb.ResourcesTestCase):
    pass


class PostgreSQLBatchClaimTest(_BatchClaimTests, base.PostgreSQLMixin,
                               rb.ResourcesTestCase):
    pass
