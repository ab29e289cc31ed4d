"""Only the methods an endpoint marks as RPC methods answer the bus.

The conductor managers are served as endpoints themselves; their public
helpers (``start``, ``stop``, ``resume_unfinished``...) must not become
remote procedures that anyone on the bus can invoke.
"""

import oslo_messaging

from cellboot.conductor import manager as conductor_manager
from cellboot import rpc
from cellboot.rpc import client as rpc_client
from cellboot.scheduler import rpc_endpoint
from tests import base
from tests.functional.rpc import base as rpc_base


class _Service:
    """An endpoint with one RPC method and one public helper."""

    target = oslo_messaging.Target(version='1.0')

    @oslo_messaging.expose
    def ping(self, context):
        return 'pong'

    def shutdown(self, context):
        raise AssertionError('a helper was called over the bus')


class AccessPolicyTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.url = rpc_base.transport_url('fake')
        self.buses = self.useFixture(rpc_base.Buses())
        self.transport = rpc.get_transport(self.url)
        self.buses.serve('host-1', 'access-policy-test', [_Service()],
                         self.transport)
        self.client = rpc_client.RPCClient(self.transport,
                                           'access-policy-test')
        self.ctx = rpc_base.user_context()

    def test_exposed_method_answers(self):
        self.assertEqual('pong', self.client.call(self.ctx, 'ping'))

    def test_public_helper_is_not_callable_over_the_bus(self):
        err = self.assertRaises(oslo_messaging.MessagingException,
                                self.client.call, self.ctx, 'shutdown',
                                timeout=5)
        self.assertIn('does not support RPC method shutdown', str(err))


class ProductionEndpointsTest(base.TestCase):
    """The real endpoints expose exactly their documented methods."""

    def _exposed(self, cls):
        return sorted(name for name in dir(cls)
                      if getattr(getattr(cls, name), 'exposed', False))

    def test_super_conductor_exposes_only_schedule_and_build(self):
        self.assertEqual(
            ['schedule_and_build_instances'],
            self._exposed(conductor_manager.SuperConductorManager))

    def test_cell_conductor_exposes_only_build_instances(self):
        self.assertEqual(
            ['build_instances'],
            self._exposed(conductor_manager.CellConductorManager))

    def test_the_api_levels_scheduler_exposes_its_api(self):
        self.assertEqual(
            ['claim_pools', 'create_allocation', 'delete_allocation',
             'get_allocation', 'release_pools', 'release_resources',
             'select_destinations'],
            self._exposed(rpc_endpoint.SchedulerEndpoint))

    def test_a_cells_scheduler_exposes_its_api(self):
        self.assertEqual(
            ['aggregate', 'claim_resources', 'host_states',
             'record_build_result', 'release_resources',
             'select_destinations', 'update_provider'],
            self._exposed(rpc_endpoint.CellSchedulerEndpoint))
