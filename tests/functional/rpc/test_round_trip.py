"""Casts through the clients reach the endpoints of the right service.

The same specification runs on ``fake://`` (one process) and on a real
RabbitMQ. Most endpoints here stand in for the conductors and compute
hosts with the methods of the documented interface (docs/rpc.md, whose
test compares them with the real endpoint classes); the compute host's
real endpoint class is served too, over a manager that records.
"""

import datetime

from oslo_utils import uuidutils

from cellboot.compute import rpc_endpoint as compute_endpoint
from cellboot.compute import rpcapi as compute_rpcapi
from cellboot.conductor import rpcapi as conductor_rpcapi
from cellboot import rpc
from cellboot.rpc import topics
from tests import base
from tests.functional.rpc import base as rpc_base


def _build_request(instance_uuid):
    return {'instance_uuid': instance_uuid, 'project_id': 'p-1',
            'user_id': 'alice',
            'instance': {'display_name': 'vm-1', 'image_ref': 'cirros',
                         'flavor': {'vcpus': 1, 'memory_mb': 512,
                                    'root_gb': 1}}}


class _RoundTripTests:

    DRIVER = 'fake'

    def setUp(self):
        super().setUp()
        self.url = rpc_base.transport_url(self.DRIVER)
        self.flags(transport_url=self.url)
        self.buses = self.useFixture(rpc_base.Buses())
        self.transport = rpc.get_transport(self.url)
        self.cell = 'cell-' + uuidutils.generate_uuid()[:8]
        self.ctx = rpc_base.user_context()

    def test_schedule_and_build_instances_reaches_the_super_conductor(self):
        conductor = rpc_base.ConductorEndpoint()
        self.buses.serve('conductor-1', topics.CONDUCTOR, [conductor],
                         self.transport)
        uuid = uuidutils.generate_uuid()
        spec = {'flavor': {'vcpus': 1, 'memory_mb': 512, 'root_gb': 1},
                'num_instances': 1}

        conductor_rpcapi.ConductorAPI().schedule_and_build_instances(
            self.ctx, [_build_request(uuid)], [spec])

        [(method, _ctx, kwargs)] = conductor.wait_for(1)
        self.assertEqual('schedule_and_build_instances', method)
        self.assertEqual({'build_requests': [_build_request(uuid)],
                          'request_specs': [spec]}, kwargs)

    def test_request_context_travels_with_the_cast(self):
        conductor = rpc_base.ConductorEndpoint()
        self.buses.serve('conductor-1', topics.CONDUCTOR, [conductor],
                         self.transport)

        conductor_rpcapi.ConductorAPI().schedule_and_build_instances(
            self.ctx, [], [])

        [(_method, ctx, _kwargs)] = conductor.wait_for(1)
        self.assertEqual(
            ('alice', 'p-1', self.ctx.request_id, False),
            (ctx.user_id, ctx.project_id, ctx.request_id, ctx.is_admin))

    def test_build_instances_reaches_the_cell_conductor(self):
        cell_conductor = rpc_base.CellConductorEndpoint()
        self.buses.serve('conductor-c', topics.cell_conductor(self.cell),
                         [cell_conductor], self.transport)
        retry = {'num_attempts': 1, 'hosts': [['h1', 'h1']],
                 'last_failure': 'spawn failed'}

        conductor_rpcapi.CellConductorAPI(
            self.cell, self.transport).build_instances(
            self.ctx, {'uuid': 'i-1'}, {'num_instances': 1},
            [{'service_host': 'h2'}], retry)

        [(method, _ctx, kwargs)] = cell_conductor.wait_for(1)
        self.assertEqual(('build_instances', retry, [{'service_host': 'h2'}]),
                         (method, kwargs['retry'], kwargs['host_list']))

    def test_build_and_run_instance_reaches_only_the_named_host(self):
        host1, host2 = (rpc_base.ComputeEndpoint(),
                        rpc_base.ComputeEndpoint())
        self.buses.serve('host1', topics.compute(self.cell), [host1],
                         self.transport)
        self.buses.serve('host2', topics.compute(self.cell), [host2],
                         self.transport)

        compute_rpcapi.ComputeAPI(
            self.cell, self.transport).build_and_run_instance(
            self.ctx, 'host2', {'uuid': 'i-1'}, [], {}, None)

        [(method, _ctx, kwargs)] = host2.wait_for(1)
        self.assertEqual(('build_and_run_instance', {'uuid': 'i-1'}),
                         (method, kwargs['instance']))
        self.assertTrue(host1.nothing_after())

    def test_build_and_run_instance_reaches_the_compute_endpoint_class(self):
        manager = rpc_base.ComputeEndpoint()
        self.buses.serve('host1', topics.compute(self.cell),
                         [compute_endpoint.ComputeEndpoint(manager)],
                         self.transport)
        retry = {'num_attempts': 1, 'hosts': [], 'last_failure': None}

        compute_rpcapi.ComputeAPI(
            self.cell, self.transport).build_and_run_instance(
            self.ctx, 'host1', {'uuid': 'i-1'}, [{'service_host': 'h2'}],
            {'num_instances': 1}, retry)

        [(_method, _ctx, kwargs)] = manager.wait_for(1)
        self.assertEqual({'instance': {'uuid': 'i-1'},
                          'host_list': [{'service_host': 'h2'}],
                          'request_spec': {'num_instances': 1},
                          'retry': retry}, kwargs)

    def test_datetimes_in_a_payload_arrive_as_iso_strings(self):
        host = rpc_base.ComputeEndpoint()
        self.buses.serve('host1', topics.compute(self.cell), [host],
                         self.transport)
        created = datetime.datetime(2024, 5, 6, 7, 8, 9)

        compute_rpcapi.ComputeAPI(
            self.cell, self.transport).build_and_run_instance(
            self.ctx, 'host1', {'created_at': created}, [], {}, None)

        [(_method, _ctx, kwargs)] = host.wait_for(1)
        self.assertEqual({'created_at': '2024-05-06T07:08:09.000000'},
                         kwargs['instance'])


class FakeRoundTripTest(_RoundTripTests, base.TestCase):
    DRIVER = 'fake'


class RabbitRoundTripTest(_RoundTripTests, base.TestCase):
    DRIVER = 'rabbit'
