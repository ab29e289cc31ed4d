"""The Nova door: nova-api 34's captured casts, served over RPC, built.

The casts are the ones captured from a real nova-api
(``tests/unit/nova/casts``), sent as nova-api sends them: a cast to
exchange ``nova``, topic ``conductor``, namespace ``compute_task``,
version 1.17, with nova-api's context, on the deployment's bus, which a
super conductor's door serves.
"""

import copy
import time
from unittest import mock

import fixtures

import oslo_messaging

from cellboot import context as cb_context
from cellboot.conductor import nova_door
from cellboot.conf import CONF
from cellboot import exception
from cellboot.nova import casts
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import fault_messages
from cellboot.objects import instance_mapping
from cellboot.objects import server_group
from cellboot.rpc import serializer as rpc_serializer
from cellboot import service
from tests import base
from tests.functional import cluster
from tests.functional import invariants
from tests.unit.nova import test_casts


def _data(value):
    return value['nova_object.data']


class NovaDoorTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(cells=2,
                                                       hosts_per_cell=2))
        door = service.RPCService(
            'door-host', casts.TOPIC,
            [nova_door.NovaDoor(self.cluster.super_conductor)],
            self.cluster.transport, exchange=casts.EXCHANGE)
        door.start()
        self.addCleanup(door.wait)
        self.addCleanup(door.stop)
        self.client = oslo_messaging.get_rpc_client(
            self.cluster.transport,
            oslo_messaging.Target(exchange=casts.EXCHANGE, topic=casts.TOPIC,
                                  namespace=casts.NAMESPACE,
                                  version=casts.VERSION),
            serializer=rpc_serializer.RequestContextSerializer())

    def _cast(self, name, change=None):
        """Send the captured cast ``name`` (changed by ``change``)."""
        _record, message = test_casts.captured(name)
        args = copy.deepcopy(message['args'])
        if change is not None:
            change(args)
        context = cb_context.RequestContext.from_dict(
            {key[len('_context_'):]: value for key, value in message.items()
             if key.startswith('_context_')})
        self.client.cast(context, casts.METHOD, **args)
        return context, [_data(br)['instance_uuid']
                         for br in args['build_requests']]

    def _wait_placed(self, uuids, timeout=30):
        """``[(cell, instance)]`` once every one is in a cell and the
        deployment is quiet (their builds ended)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                for uuid in uuids:
                    self.cluster.find(uuid)
                self.cluster.wait_for_quiet()
                return [self.cluster.find(uuid) for uuid in uuids]
            except exception.InstanceNotFound:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def test_a_single_and_a_multi_create_go_active(self):
        _context, single = self._cast('single')
        _context, multi = self._cast('multi_create_3')
        found = self._wait_placed(single + multi)
        self.assertEqual(['active'] * 4,
                         [instance.vm_state for _cell, instance in found])
        cell, instance = found[0]
        self.assertEqual('web-1', instance.display_name)
        self.assertEqual({'role': 'web', 'tier': 'front'}, instance.metadata)
        self.assertEqual(['batch-1', 'batch-2', 'batch-3'],
                         [instance.display_name for _cell, instance
                          in found[1:]])
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_a_redelivered_cast_builds_once(self):
        _context, uuids = self._cast('multi_create_3')
        self._wait_placed(uuids)
        self._cast('multi_create_3')
        self.cluster.wait_for_quiet()
        for uuid in uuids:
            self.assertEqual(1, len(self.cluster.flows(uuid)))
            self.assertEqual('active', self.cluster.find(uuid)[1].vm_state)
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_what_cellboot_cannot_build_ends_in_error_saying_so(self):
        def volume(args):
            device = _data(args['block_device_mapping'])['objects'][0]
            _data(device).update(source_type='volume',
                                 destination_type='volume', volume_id='v')
        _context, (uuid,) = self._cast('single', volume)
        ((cell, instance),) = self._wait_placed([uuid])
        self.assertEqual(('cell0', 'error'), (cell.name, instance.vm_state))
        fault = self.cluster.fault(uuid)
        self.assertEqual(
            'The request asks for what this cloud cannot build: volumes '
            '(block device mappings beyond the image).', fault.message)
        self.assertEqual(fault.message,
                         fault_messages.for_user(fault.code, fault.message))
        self.assertEqual({}, self.cluster.allocations(uuid))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def _assert_nothing_written(self, uuids):
        # A good cast after the bad one: once it is built, the bad one
        # (sent first, on the same queue) has been handled too.
        _context, good = self._cast('single', self._new_uuids)
        self._wait_placed(good)
        ctx = self.cluster.ctx
        self.assertEqual({}, instance_mapping.InstanceMapping.
                         get_by_instance_uuids(ctx, uuids))
        for uuid in uuids:
            self.assertRaises(exception.BuildRequestNotFound,
                              build_request_obj.BuildRequest.
                              get_by_instance_uuid, ctx, uuid)
            self.assertEqual([], self.cluster.flows(uuid))

    @staticmethod
    def _new_uuids(args):
        from oslo_utils import uuidutils
        for request, spec in zip(args['build_requests'],
                                 args['request_specs']):
            uuid = uuidutils.generate_uuid()
            _data(request)['instance_uuid'] = uuid
            _data(_data(request)['instance'])['uuid'] = uuid
            _data(spec)['instance_uuid'] = uuid
            _data(_data(request)['instance'])['reservation_id'] = 'r-again'

    def test_a_malformed_cast_writes_nothing(self):
        def nul_in_name(args):
            _data(_data(args['build_requests'][0])['instance'])[
                'display_name'] = 'a\x00b'
        _context, uuids = self._cast('single', nul_in_name)
        self._assert_nothing_written(uuids)

    def test_a_request_too_large_to_store_writes_nothing(self):
        # Within every per-field bound, too much together: cellboot's
        # API would answer 413 ([api] max_boot_payload_size).
        CONF.set_override('max_boot_payload_size', 65536, group='api')
        log = self.useFixture(fixtures.FakeLogger(
            name='cellboot.conductor.nova_door'))

        def big_metadata(args):
            for request in args['build_requests']:
                _data(_data(request)['instance'])['metadata'] = {
                    f'k{i}': 'v' * 255 for i in range(128)}
        _context, uuids = self._cast('multi_create_3', big_metadata)
        self._assert_nothing_written(uuids)
        self.assertIn('over [api] max_boot_payload_size (65536)',
                      log.output)

    def test_instances_of_another_project_are_refused(self):
        def other_project(args):
            request = _data(args['build_requests'][0])
            request['project_id'] = 'project-b'
            _data(request['instance'])['project_id'] = 'project-b'
        _context, uuids = self._cast('single', other_project)
        self._assert_nothing_written(uuids)

    def test_a_cellboot_instance_cannot_be_named_again(self):
        (theirs,) = self.cluster.boot()
        self.cluster.wait_for_quiet()

        def steal(args):
            request = _data(args['build_requests'][0])
            request['instance_uuid'] = theirs
            _data(request['instance'])['uuid'] = theirs
            _data(args['request_specs'][0])['instance_uuid'] = theirs
        self._cast('single', steal)
        _context, good = self._cast('single', self._new_uuids)
        self._wait_placed(good)
        self.assertEqual(1, len(self.cluster.flows(theirs)))
        mapping = instance_mapping.InstanceMapping.get_by_instance_uuid(
            self.cluster.ctx, theirs)
        self.assertEqual('project-a', mapping.project_id)

    def _nova_group(self):
        record, _message = test_casts.captured('server_group')
        return record['request']['os:scheduler_hints']['group']

    def test_a_server_group_is_honoured_under_nova_s_uuid(self):
        _context, uuids = self._cast('server_group')
        found = self._wait_placed(uuids)
        self.assertEqual(['active'] * 2,
                         [instance.vm_state for _cell, instance in found])
        self.assertEqual(2, len({(cell.uuid, instance.host)
                                 for cell, instance in found}))
        group = server_group.ServerGroup.get_by_uuid(self.cluster.ctx,
                                                     self._nova_group())
        self.assertEqual(('spread', 'nova-project', 'anti-affinity',
                          uuids),
                         (group.name, group.project_id, group.policy,
                          group.members))
        # Delivered again: built once, no member added twice.
        self._cast('server_group')
        self.cluster.wait_for_quiet()
        self.assertEqual(uuids, server_group.ServerGroup.get_by_uuid(
            self.cluster.ctx, self._nova_group()).members)
        self.assertEqual([1, 1], [len(self.cluster.flows(uuid))
                                  for uuid in uuids])
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_a_group_of_another_project_or_policy_is_not_joined(self):
        ctx = self.cluster.ctx
        server_group.ServerGroup.create(
            ctx, 'theirs', 'project-b', server_group.AFFINITY,
            uuid=self._nova_group())
        _context, uuids = self._cast('server_group')
        self._assert_nothing_written(uuids)
        self.assertEqual([], server_group.ServerGroup.get_by_uuid(
            ctx, self._nova_group()).members)

    def test_a_group_policy_cellboot_does_not_know_ends_in_error(self):
        def strange_policy(args):
            for spec in args['request_specs']:
                _data(_data(spec)['instance_group'])['policy'] = 'lottery'
        _context, uuids = self._cast('server_group', strange_policy)
        found = self._wait_placed(uuids)
        self.assertEqual([('cell0', 'error')] * 2,
                         [(cell.name, instance.vm_state)
                          for cell, instance in found])
        self.assertIn('a server group policy other than affinity and '
                      'anti-affinity', self.cluster.fault(uuids[0]).message)
        self.assertRaises(exception.ServerGroupNotFound,
                          server_group.ServerGroup.get_by_uuid,
                          self.cluster.ctx, self._nova_group())

    def test_a_delivery_racing_another_is_accepted_once(self):
        context, uuids = self._cast('single')
        self._wait_placed(uuids)
        _record, message = test_casts.captured('single')
        real = instance_mapping.InstanceMapping.get_by_instance_uuids
        # The first read misses what the other delivery just wrote.
        misses = [{}]

        def racing(ctx, wanted):
            return misses.pop() if misses else real(ctx, wanted)
        with mock.patch.object(instance_mapping.InstanceMapping,
                               'get_by_instance_uuids',
                               side_effect=racing):
            self.assertTrue(nova_door.build(
                self.cluster.super_conductor, context, message['args'],
                'racing'))
        self.cluster.wait_for_quiet()
        self.assertEqual([1], [len(self.cluster.flows(uuid))
                               for uuid in uuids])
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_other_compute_task_methods_answer_not_supported(self):
        context = cb_context.RequestContext(user_id='u', project_id='p')
        for method in nova_door.NOT_SUPPORTED:
            error = self.assertRaises(
                Exception, self.client.prepare(timeout=10).call, context,
                method, instance={'uuid': 'x'})
            self.assertIn(f'{method} is not supported by cellboot',
                          str(error))
