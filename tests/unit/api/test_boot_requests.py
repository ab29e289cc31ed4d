"""What a boot request asks of its instances (``boot_requests.describe``).

The REST handler, the functional tests' cluster and the e2e benchmark
all describe a request with it before ``persist`` writes it.
"""

from cellboot.api import boot_requests
from cellboot import context as cb_context
from tests import base

FLAVOR = {'flavorid': 'small', 'name': 'small', 'vcpus': 1,
          'memory_mb': 512, 'root_gb': 1}


class DescribeTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.ctx = cb_context.RequestContext(user_id='alice',
                                             project_id='project-a')

    def test_the_instance_carries_what_its_servers_share(self):
        instance, _spec = boot_requests.describe(
            self.ctx, 'web', FLAVOR, image_ref='cirros',
            availability_zone='az1', metadata={'k': 'v'})
        reservation_id = instance.pop('reservation_id')
        self.assertRegex(reservation_id, r'^r-.{8}$')
        self.assertEqual({'display_name': 'web', 'flavor': FLAVOR,
                          'image_ref': 'cirros', 'availability_zone': 'az1',
                          'metadata': {'k': 'v'}}, instance)

    def test_the_spec_names_the_count_hints_and_owner(self):
        hints = {'target_cell': 'cell1'}
        _instance, spec = boot_requests.describe(
            self.ctx, 'web', FLAVOR, count=3, hints=hints,
            project_id='project-b')
        self.assertEqual({'flavor': FLAVOR, 'num_instances': 3,
                          'availability_zone': None,
                          'scheduler_hints': hints,
                          'project_id': 'project-b', 'user_id': 'alice'},
                         spec)

    def test_defaults_the_callers_project_no_metadata_no_hints(self):
        instance, spec = boot_requests.describe(self.ctx, 'web', FLAVOR)
        self.assertEqual(({}, {}, 'project-a', 1),
                         (instance['metadata'], spec['scheduler_hints'],
                          spec['project_id'], spec['num_instances']))

    def test_each_request_gets_a_reservation_of_its_own(self):
        first, _spec = boot_requests.describe(self.ctx, 'web', FLAVOR)
        second, _spec = boot_requests.describe(self.ctx, 'web', FLAVOR)
        self.assertNotEqual(first['reservation_id'],
                            second['reservation_id'])
