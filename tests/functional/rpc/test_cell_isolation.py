"""Cells that share one transport never receive each other's messages.

Two cells mapped with the same transport URL get the same transport
object, and their services listen on it side by side, even under the
same host name. Every in-cell topic carries the cell's name, so a cast
for cell1 is delivered in cell1 alone.
"""

from oslo_utils import uuidutils

from cellboot.compute import rpcapi as compute_rpcapi
from cellboot.conductor import rpcapi as conductor_rpcapi
from cellboot.objects import cell_mapping
from cellboot import rpc
from cellboot.rpc import topics
from tests import base
from tests.functional.rpc import base as rpc_base


class _SharedTransportTests:

    DRIVER = 'fake'

    def setUp(self):
        super().setUp()
        self.buses = self.useFixture(rpc_base.Buses())
        url = rpc_base.transport_url(self.DRIVER)
        suffix = uuidutils.generate_uuid()[:8]
        self.cell1, self.cell2 = (
            cell_mapping.CellMapping(uuid=uuidutils.generate_uuid(),
                                     name=f'{name}-{suffix}',
                                     transport_url=url)
            for name in ('cell1', 'cell2'))
        self.transport = rpc.get_cell_transport(self.cell1)
        self.ctx = rpc_base.user_context()

    def _serve_in_both_cells(self, host, topic_of, endpoint_class):
        endpoints = []
        for cell in (self.cell1, self.cell2):
            endpoint = endpoint_class()
            self.buses.serve(host, topic_of(cell.name), [endpoint],
                             rpc.get_cell_transport(cell))
            endpoints.append(endpoint)
        return endpoints

    def test_cells_with_the_same_url_share_one_transport(self):
        self.assertIs(rpc.get_cell_transport(self.cell1),
                      rpc.get_cell_transport(self.cell2))

    def test_compute_cast_for_cell1_never_reaches_cell2s_same_host(self):
        in_cell1, in_cell2 = self._serve_in_both_cells(
            'host1', topics.compute, rpc_base.ComputeEndpoint)

        compute_rpcapi.ComputeAPI(
            self.cell1.name, self.transport).build_and_run_instance(
            self.ctx, 'host1', {'uuid': 'i-1'}, [], {}, None)

        self.assertEqual(1, len(in_cell1.wait_for(1)))
        self.assertTrue(in_cell2.nothing_after())

    def test_conductor_cast_for_cell1_never_reaches_cell2(self):
        in_cell1, in_cell2 = self._serve_in_both_cells(
            'conductor-1', topics.cell_conductor,
            rpc_base.CellConductorEndpoint)

        conductor_rpcapi.CellConductorAPI(
            self.cell1.name, self.transport).build_instances(
            self.ctx, {'uuid': 'i-1'}, {}, [], {'num_attempts': 1})

        self.assertEqual(1, len(in_cell1.wait_for(1)))
        self.assertTrue(in_cell2.nothing_after())


class FakeSharedTransportTest(_SharedTransportTests, base.TestCase):
    DRIVER = 'fake'


class RabbitSharedTransportTest(_SharedTransportTests, base.TestCase):
    DRIVER = 'rabbit'
