"""``quota.fit``: how many instances of a request a project may have."""

from cellboot import exception
from cellboot import quota
from tests import base

LIMITS = {'instances': 10, 'cores': 20, 'ram': 51200}
NOTHING = {'instances': 0, 'cores': 0, 'ram': 0}


def used(instances=0, cores=0, ram=0):
    return {'instances': instances, 'cores': cores, 'ram': ram}


class FitTest(base.TestCase):

    def test_a_request_under_every_limit_gets_all_it_asked_for(self):
        self.assertEqual(3, quota.fit(LIMITS, NOTHING, 3, 3, 1, 512))

    def test_a_request_exactly_at_the_limit_fits(self):
        self.assertEqual(2, quota.fit(LIMITS, used(instances=8), 2, 2, 1,
                                      512))

    def test_one_instance_over_is_refused_in_novas_words(self):
        error = self.assertRaises(exception.QuotaExceeded, quota.fit,
                                  LIMITS, used(instances=8), 5, 5, 1, 512)
        self.assertEqual('Quota exceeded for instances: Requested 5, but '
                         'already used 8 of 10 instances', str(error))
        self.assertEqual(403, error.code)

    def test_cores_are_the_flavors_vcpus_times_the_count(self):
        error = self.assertRaises(exception.QuotaExceeded, quota.fit,
                                  LIMITS, used(cores=18), 2, 2, 2, 512)
        self.assertEqual('Quota exceeded for cores: Requested 4, but already '
                         'used 18 of 20 cores', str(error))

    def test_ram_is_the_flavors_memory_times_the_count(self):
        error = self.assertRaises(exception.QuotaExceeded, quota.fit,
                                  LIMITS, used(ram=50000), 1, 1, 1, 2048)
        self.assertEqual('Quota exceeded for ram: Requested 2048, but '
                         'already used 50000 of 51200 ram', str(error))

    def test_instances_are_named_first_when_several_are_over(self):
        error = self.assertRaises(exception.QuotaExceeded, quota.fit,
                                  LIMITS, used(10, 20, 51200), 1, 1, 1, 1)
        self.assertIn('for instances:', str(error))

    def test_a_multi_create_gets_as_many_as_fit_down_to_min_count(self):
        self.assertEqual(4, quota.fit(LIMITS, used(instances=6), 2, 8, 1,
                                      512))

    def test_a_multi_create_whose_min_count_does_not_fit_is_refused(self):
        error = self.assertRaises(exception.QuotaExceeded, quota.fit,
                                  LIMITS, used(instances=6), 5, 8, 1, 512)
        self.assertIn('Requested 5, but already used 6 of 10', str(error))

    def test_unlimited_resources_are_not_counted(self):
        limits = dict(LIMITS, instances=-1, cores=-1)
        self.assertEqual(1000, quota.fit(limits, used(5000, 90000), 1000,
                                         1000, 8, 1))

    def test_a_zero_limit_refuses_everything(self):
        self.assertRaises(exception.QuotaExceeded, quota.fit,
                          dict(LIMITS, instances=0), NOTHING, 1, 1, 1, 1)

    def test_usage_already_over_a_lowered_limit_refuses(self):
        self.assertRaises(exception.QuotaExceeded, quota.fit, LIMITS,
                          used(instances=15), 1, 1, 1, 1)

    def test_a_flavor_of_no_size_counts_only_as_an_instance(self):
        self.assertEqual(10, quota.fit(LIMITS, used(cores=20, ram=51200),
                                       1, 10, 0, 0))


class ValidateTest(base.TestCase):

    def test_limits_from_minus_one_to_the_column_maximum_are_valid(self):
        values = {'instances': -1, 'cores': 0, 'ram': 2 ** 31 - 1}
        self.assertEqual(values, quota.validate_limits(values))

    def test_out_of_range_or_not_integer_limits_are_invalid(self):
        for value in (-2, 2 ** 31, 1.5, '3', True, None):
            self.assertRaises(exception.Invalid, quota.validate_limits,
                              {'cores': value})

    def test_unknown_resources_and_empty_updates_are_invalid(self):
        self.assertRaises(exception.Invalid, quota.validate_limits,
                          {'floating_ips': 1})
        self.assertRaises(exception.Invalid, quota.validate_limits, {})

    def test_project_ids_beyond_the_column_width_are_invalid(self):
        for project_id in ('', ' ', 'p' * 256, 'a\x00b', None):
            self.assertRaises(exception.Invalid, quota.validate_project_id,
                              project_id)
        self.assertEqual('p' * 255, quota.validate_project_id('p' * 255))

    def test_the_defaults_are_the_quota_options(self):
        self.flags(instances=3, cores=-1, group='quota')
        self.assertEqual({'instances': 3, 'cores': -1, 'ram': 51200},
                         quota.defaults())
