"""The invariant checker reports every kind of violation it knows.

Each test settles a boot, plants one violation directly in a database
and expects the checker to name it, so that an empty list from the
checker can be trusted.
"""

from oslo_utils import uuidutils
import sqlalchemy as sa
from taskflow.persistence.backends.sqlalchemy import tables as tf_tables

from cellboot import context as cb_context
from cellboot.db.api import connection as api_connection
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot.flowrun import backend as flow_db
from cellboot.objects import build_request
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_mapping
from tests import base
from tests.functional import cluster
from tests.functional import invariants


class InvariantCheckerTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=1))
        self.ctx = self.cluster.ctx
        (self.uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        self.cell, self.instance = self.cluster.find(self.uuid)
        self.node = self.cluster.computes[self.instance.host].node

    def assertReported(self, phrase):
        found = invariants.check_invariants(self.ctx)
        self.assertTrue(any(phrase in line for line in found),
                        f'{phrase!r} not in {found}')

    def _update_instance(self, **values):
        with cb_context.target_cell(self.ctx, self.cell) as cctxt:
            instance_obj.Instance.get_by_uuid(cctxt, self.uuid).update(
                cctxt, **values)

    def _new_instance(self, cell, uuid=None, **values):
        uuid = uuid or uuidutils.generate_uuid()
        with cb_context.target_cell(self.ctx, cell) as cctxt:
            instance_obj.Instance.create(cctxt, uuid, 'project-a', **values)
        return uuid

    def test_a_settled_deployment_has_no_violation(self):
        self.assertEqual([], invariants.check_invariants(self.ctx))

    def test_reports_a_mapping_without_a_cell(self):
        instance_mapping.InstanceMapping.create(
            self.ctx, uuidutils.generate_uuid(), 'project-a')
        self.assertReported('has no cell (NULL)')

    def test_reports_a_mapping_to_a_cell_without_the_instance(self):
        instance_mapping.InstanceMapping.create(
            self.ctx, uuidutils.generate_uuid(), 'project-a',
            cell_uuid=self.cell.uuid)
        self.assertReported('which has no such instance')

    def test_reports_an_instance_live_in_two_cells(self):
        self._new_instance(self.cluster.cell0, self.uuid, vm_state='error')
        self.assertReported('is live in 2 cells')

    def test_reports_a_live_instance_without_a_mapping(self):
        self._new_instance(self.cell, vm_state='active',
                           host=self.instance.host, node=self.instance.node)
        self.assertReported('has no instance mapping')

    def test_reports_an_instance_mapped_to_another_cell(self):
        instance_mapping.InstanceMapping.get_by_instance_uuid(
            self.ctx, self.uuid).set_cell(self.ctx, self.cluster.cell0.uuid)
        self.assertReported('is mapped to cell cell0')

    def test_reports_an_instance_still_building(self):
        self._update_instance(vm_state='building')
        self.assertReported('is still building')

    def test_reports_an_error_without_a_fault(self):
        self._update_instance(vm_state='error')
        self.assertReported('is in ERROR without a fault')

    def test_reports_a_build_request_that_outlived_its_instance(self):
        build_request.BuildRequest.create(self.ctx, self.uuid, 'project-a',
                                          {})
        self.assertReported('outlived the creation of its instance')

    def test_reports_a_build_request_never_built(self):
        build_request.BuildRequest.create(
            self.ctx, uuidutils.generate_uuid(), 'project-a', {})
        self.assertReported('was never created in a cell')

    def test_reports_an_allocation_of_no_live_instance(self):
        self.cluster.cell_schedulers['cell1'].claim_resources(
            self.ctx, uuidutils.generate_uuid(), self.node.uuid, {'VCPU': 1})
        self.assertReported('is no live, non-ERROR instance')

    def test_reports_allocations_of_an_error_instance(self):
        self._update_instance(vm_state='error')
        self.assertReported('is no live, non-ERROR instance')

    def test_reports_an_active_instance_without_allocations(self):
        self.cluster.scheduler.release_resources(self.ctx, self.uuid)
        self.assertReported(f'instance {self.uuid} holds allocations {{}}')

    def test_reports_allocations_that_differ_from_the_flavor(self):
        self.cluster.cell_schedulers['cell1'].claim_resources(
            self.ctx, self.uuid, self.node.uuid,
            {'VCPU': 2, 'MEMORY_MB': 512, 'DISK_GB': 10})
        self.assertReported("'VCPU': 2")

    def test_reports_an_instance_on_an_unknown_host(self):
        self._update_instance(host='nowhere', node='nowhere')
        self.assertReported('which is no compute node of cell cell1')

    def test_reports_an_over_committed_provider(self):
        allocations = cell_models.Allocation.__table__
        providers = cell_models.ResourceProvider.__table__
        with cell_connection.get_engine(
                self.cell.database_connection).begin() as conn:
            provider_id = conn.execute(sa.select(providers.c.id).where(
                providers.c.uuid == self.node.uuid)).scalar()
            conn.execute(sa.insert(allocations).values(
                resource_provider_id=provider_id, resource_class='VCPU',
                consumer_id=uuidutils.generate_uuid(), used=1000))
        self.assertReported('is over-committed on VCPU')

    def test_reports_allocations_left_in_the_api_database(self):
        with api_connection.get_engine().begin() as conn:
            provider_id = conn.execute(sa.insert(
                api_models.ResourceProvider.__table__).values(
                    uuid=uuidutils.generate_uuid(), name='old-host',
                    generation=1)).inserted_primary_key[0]
            conn.execute(sa.insert(api_models.Allocation.__table__).values(
                resource_provider_id=provider_id, resource_class='VCPU',
                consumer_id=self.uuid, used=1))
        self.assertReported(f'consumer {self.uuid} holds allocations in the '
                            f'API database')

    def test_reports_a_flow_left_running(self):
        flows = tf_tables.fetch(sa.MetaData()).flowdetails
        engine = flow_db.get_backend(self.cluster.flow_url).engine
        with engine.begin() as conn:
            conn.execute(sa.update(flows).values(state='RUNNING'))
        self.assertReported('is RUNNING, not SUCCESS or REVERTED')
