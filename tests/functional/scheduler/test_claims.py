"""Claims and releases: what fits is written, what does not is refused."""

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.scheduler.resources import claims
from tests import base
from tests.functional.scheduler import resources_base as rb


class _ClaimTests:

    def setUp(self):
        super().setUp()
        self.rp = self.create_provider()
        self.consumer = uuidutils.generate_uuid()

    def _assert_claim_fails(self, resources, *words, rp=None):
        exc = self.assertRaises(exception.ClaimFailed, claims.claim_resources,
                                self.ctx, self.consumer, rp or self.rp,
                                resources)
        for word in words:
            self.assertIn(word, str(exc))
        self.assertEqual([], self.allocation_rows(self.consumer))
        return exc

    def test_claim_that_fits_writes_one_allocation_per_class(self):
        self.assertTrue(claims.claim_resources(self.ctx, self.consumer,
                                               self.rp, rb.SMALL))
        self.assertEqual(
            [(self.consumer, 'DISK_GB', 20),
             (self.consumer, 'MEMORY_MB', 2048),
             (self.consumer, 'VCPU', 2)],
            self.allocation_rows(self.consumer))

    def test_claim_bumps_the_generation(self):
        claims.claim_resources(self.ctx, self.consumer, self.rp, rb.SMALL)
        self.assertEqual(2, self.generation(self.rp))

    def test_claims_fill_capacity_exactly(self):
        for _ in range(4):
            claims.claim_resources(self.ctx, uuidutils.generate_uuid(),
                                   self.rp, rb.SMALL)
        self._assert_claim_fails(rb.SMALL, 'VCPU', '8 of its capacity of 8')

    def test_failure_names_provider_consumer_and_class(self):
        exc = self._assert_claim_fails({'VCPU': 9}, 'VCPU', self.rp,
                                       self.consumer)
        # max_unit defaults to total, so 9 of 8 is refused per consumer.
        self.assertIn('max_unit of 8', str(exc))

    def test_reserved_is_not_claimable(self):
        # 16384 - 512 reserved leaves 15872.
        claims.claim_resources(self.ctx, uuidutils.generate_uuid(), self.rp,
                               {'MEMORY_MB': 15000})
        self._assert_claim_fails({'MEMORY_MB': 873}, 'MEMORY_MB',
                                 '15000 of its capacity of 15872',
                                 'reserved 512')
        claims.claim_resources(self.ctx, self.consumer, self.rp,
                               {'MEMORY_MB': 872})

    def test_allocation_ratio_multiplies_capacity(self):
        rp = self.create_provider({'VCPU': {'total': 4, 'max_unit': 4,
                                            'allocation_ratio': 1.5}})
        claims.claim_resources(self.ctx, uuidutils.generate_uuid(), rp,
                               {'VCPU': 4})
        claims.claim_resources(self.ctx, uuidutils.generate_uuid(), rp,
                               {'VCPU': 2})
        self._assert_claim_fails({'VCPU': 1}, '6 of its capacity of 6',
                                 'allocation_ratio 1.5', rp=rp)

    def test_amount_above_max_unit_fails(self):
        rp = self.create_provider({'VCPU': {'total': 16, 'max_unit': 4}})
        self._assert_claim_fails({'VCPU': 5}, 'max_unit of 4', rp=rp)

    def test_amount_below_min_unit_fails(self):
        rp = self.create_provider({'MEMORY_MB': {'total': 4096,
                                                 'min_unit': 512}})
        self._assert_claim_fails({'MEMORY_MB': 256}, 'min_unit of 512',
                                 rp=rp)

    def test_amount_off_step_size_fails(self):
        rp = self.create_provider({'DISK_GB': {'total': 100,
                                               'step_size': 10}})
        self._assert_claim_fails({'DISK_GB': 15}, 'step_size of 10', rp=rp)
        claims.claim_resources(self.ctx, self.consumer, rp, {'DISK_GB': 20})

    def test_class_without_inventory_fails(self):
        rp = self.create_provider({'VCPU': {'total': 8}})
        self._assert_claim_fails({'VCPU': 1, 'DISK_GB': 1},
                                 'has no DISK_GB inventory', rp=rp)

    def test_claim_is_all_or_nothing(self):
        # VCPU fits, MEMORY_MB does not: nothing is written.
        self._assert_claim_fails({'VCPU': 1, 'MEMORY_MB': 16000},
                                 'MEMORY_MB')
        self.assertEqual(1, self.generation(self.rp))

    def test_same_claim_again_is_a_no_op(self):
        claims.claim_resources(self.ctx, self.consumer, self.rp, rb.SMALL)
        self.assertTrue(claims.claim_resources(self.ctx, self.consumer,
                                               self.rp, rb.SMALL))
        self.assertEqual(3, len(self.allocation_rows(self.consumer)))
        self.assertEqual(2, self.generation(self.rp))

    def test_same_claim_again_succeeds_on_a_full_provider(self):
        for _ in range(3):
            claims.claim_resources(self.ctx, uuidutils.generate_uuid(),
                                   self.rp, rb.SMALL)
        claims.claim_resources(self.ctx, self.consumer, self.rp, rb.SMALL)
        self.assertTrue(claims.claim_resources(self.ctx, self.consumer,
                                               self.rp, rb.SMALL))

    def test_a_first_claim_refuses_a_consumer_holding_on_any_provider(self):
        other = self.create_provider()
        claims.claim_resources(self.ctx, self.consumer, other, rb.SMALL)
        for provider in (self.rp, other):
            self.assertRaises(claims.HeldAlready, claims.claim_resources,
                              self.ctx, self.consumer, provider, rb.SMALL,
                              first=True)
        self.assertEqual((3, 1, 2),
                         (len(self.allocation_rows(self.consumer)),
                          self.generation(self.rp), self.generation(other)))

    def test_a_first_claim_of_a_consumer_holding_nothing_is_written(self):
        self.assertTrue(claims.claim_resources(
            self.ctx, self.consumer, self.rp, rb.SMALL, first=True))
        self.assertEqual(3, len(self.allocation_rows(self.consumer)))

    def test_different_claim_replaces_the_consumers_allocations(self):
        claims.claim_resources(self.ctx, self.consumer, self.rp, rb.SMALL)
        # 8 VCPUs fit only because the consumer's own 2 are given back.
        claims.claim_resources(self.ctx, self.consumer, self.rp, {'VCPU': 8})
        self.assertEqual([(self.consumer, 'VCPU', 8)],
                         self.allocation_rows(self.consumer))

    def test_claim_on_missing_provider_raises_not_found(self):
        self.assertRaises(exception.ResourceProviderNotFound,
                          claims.claim_resources, self.ctx, self.consumer,
                          uuidutils.generate_uuid(), rb.SMALL)

    def test_non_positive_amount_is_invalid(self):
        for amount in (0, -1, 1.5, True):
            self.assertRaises(exception.Invalid, claims.claim_resources,
                              self.ctx, self.consumer, self.rp,
                              {'VCPU': amount})

    def test_empty_claim_is_invalid(self):
        self.assertRaises(exception.Invalid, claims.claim_resources,
                          self.ctx, self.consumer, self.rp, {})


class _ReleaseTests:

    def setUp(self):
        super().setUp()
        self.rp1 = self.create_provider()
        self.rp2 = self.create_provider()
        self.consumer = uuidutils.generate_uuid()
        claims.claim_resources(self.ctx, self.consumer, self.rp1, rb.SMALL)
        claims.claim_resources(self.ctx, self.consumer, self.rp2,
                               {'VCPU': 1})

    def test_release_returns_what_was_released(self):
        self.assertEqual(
            {self.rp1: rb.SMALL, self.rp2: {'VCPU': 1}},
            claims.release_resources(self.ctx, self.consumer))
        self.assertEqual([], self.allocation_rows(self.consumer))

    def test_release_is_idempotent(self):
        claims.release_resources(self.ctx, self.consumer)
        self.assertEqual({}, claims.release_resources(self.ctx,
                                                      self.consumer))

    def test_release_on_one_provider_keeps_the_others(self):
        self.assertEqual(
            {self.rp2: {'VCPU': 1}},
            claims.release_resources(self.ctx, self.consumer, self.rp2))
        self.assertEqual(3, len(self.allocation_rows(self.consumer)))

    def test_release_bumps_the_generation_of_touched_providers(self):
        claims.release_resources(self.ctx, self.consumer, self.rp2)
        self.assertEqual((2, 3), (self.generation(self.rp1),
                                  self.generation(self.rp2)))

    def test_release_keeps_other_consumers(self):
        other = uuidutils.generate_uuid()
        claims.claim_resources(self.ctx, other, self.rp1, rb.SMALL)
        claims.release_resources(self.ctx, self.consumer)
        self.assertEqual(3, len(self.allocation_rows(other)))

    def test_released_capacity_can_be_claimed_again(self):
        for _ in range(3):
            claims.claim_resources(self.ctx, uuidutils.generate_uuid(),
                                   self.rp1, rb.SMALL)
        claims.release_resources(self.ctx, self.consumer)
        claims.claim_resources(self.ctx, uuidutils.generate_uuid(),
                               self.rp1, rb.SMALL)


class SQLiteClaimTest(_ClaimTests, base.SQLiteMixin, rb.ResourcesTestCase):
    pass


class MySQLClaimTest(_ClaimTests, base.MySQLMixin, rb.ResourcesTestCase):
    pass


class PostgreSQLClaimTest(_ClaimTests, base.PostgreSQLMixin,
                          rb.ResourcesTestCase):
    pass


class SQLiteReleaseTest(_ReleaseTests, base.SQLiteMixin,
                        rb.ResourcesTestCase):
    pass


class MySQLReleaseTest(_ReleaseTests, base.MySQLMixin, rb.ResourcesTestCase):
    pass


class PostgreSQLReleaseTest(_ReleaseTests, base.PostgreSQLMixin,
                            rb.ResourcesTestCase):
    pass
