"""nova-api 34's real casts read, and hostile ones refused, without nova.

The casts in ``casts/`` were captured off RabbitMQ from an unmodified
nova-api 34 (``tools/capture_nova_casts.py``): the door is checked
against what Nova sends, not against our idea of it.
"""

import copy
import json
import os

from cellboot.conductor import nova_door
from cellboot.nova import casts
from cellboot.nova import primitives
from tests import base

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURED = ('single', 'multi_create_3', 'password_hints_tags',
            'server_group')


def record_of(name):
    """The file of capture ``name``: request, exchange, routing key, body."""
    with open(os.path.join(HERE, 'casts', f'{name}.json')) as dump:
        return json.load(dump)


def captured(name):
    """(the REST request nova-api got, the decoded RPC message)."""
    record = record_of(name)
    return record, json.loads(record['body']['oslo.message'])


def _data(value):
    return value['nova_object.data']


class CapturedCastsTest(base.TestCase):
    """What nova-api really sends is read right."""

    def test_every_cast_is_where_the_door_listens(self):
        for name in CAPTURED:
            record, message = captured(name)
            self.assertEqual(casts.EXCHANGE, record['exchange'])
            self.assertEqual(casts.TOPIC, record['routing_key'])
            self.assertEqual('2.0', record['body']['oslo.version'])
            self.assertEqual(casts.METHOD, message['method'])
            self.assertEqual(casts.NAMESPACE, message['namespace'])
            self.assertEqual(casts.VERSION, message['version'])

    def test_a_single_boot(self):
        record, message = captured('single')
        boot = casts.parse(message['args'])
        server = record['request']['server']
        self.assertEqual(1, len(boot.instances))
        self.assertEqual(server['name'], boot.instances[0].name)
        self.assertEqual(server['metadata'], boot.instances[0].metadata)
        self.assertEqual(server['imageRef'], boot.image_ref)
        self.assertEqual({'flavorid': 'm1.tiny', 'name': 'm1.tiny',
                          'vcpus': 1, 'memory_mb': 512, 'root_gb': 1,
                          'extra_specs': {}},
                         boot.flavor)
        self.assertEqual(message['_context_project_id'], boot.project_id)
        self.assertEqual(message['_context_user_id'], boot.user_id)
        self.assertRegex(boot.reservation_id, r'^r-[0-9a-z]{8}$')
        self.assertEqual([_data(br)['instance_uuid']
                          for br in message['args']['build_requests']],
                         boot.uuids)
        self.assertEqual((), boot.unsupported)

    def test_a_multi_create_is_one_request_of_three(self):
        _record, message = captured('multi_create_3')
        boot = casts.parse(message['args'])
        self.assertEqual(3, len(set(boot.uuids)))
        self.assertEqual([0, 1, 2], [i.launch_index for i in boot.instances])
        self.assertEqual(['batch-1', 'batch-2', 'batch-3'],
                         [i.name for i in boot.instances])

    def test_hints_cellboot_does_not_read_are_named_not_kept(self):
        _record, message = captured('password_hints_tags')
        boot = casts.parse(message['args'])
        self.assertEqual({}, boot.hints)    # different_host was empty
        self.assertEqual(('custom_hint',), boot.ignored_hints)

    def test_a_server_group_is_read_from_the_request_spec(self):
        record, message = captured('server_group')
        boot = casts.parse(message['args'])
        uuid = record['request']['os:scheduler_hints']['group']
        self.assertEqual({'uuid': uuid, 'policy': 'anti-affinity',
                          'name': 'spread', 'project_id': 'nova-project'},
                         boot.group)
        self.assertEqual(2, len(boot.instances))
        self.assertEqual((), boot.unsupported)
        self.assertEqual((), boot.ignored_hints)

    def test_secrets_are_not_kept(self):
        record, message = captured('password_hints_tags')
        boot = casts.parse(message['args'])
        password = record['request']['server']['adminPass']
        self.assertEqual(password, message['args']['admin_password'])
        self.assertNotIn(password, repr(boot))
        self.assertNotIn(message['_context_auth_token'], repr(boot))


class HostileCastsTest(base.TestCase):
    """Whatever else arrives is refused, saying where, or built as asked."""

    def setUp(self):
        super().setUp()
        _record, message = captured('multi_create_3')
        self.args = message['args']

    def _instance(self, args, index=0):
        return _data(_data(args['build_requests'][index])['instance'])

    def _spec(self, args, index=0):
        return _data(args['request_specs'][index])

    def assertMalformed(self, args, *fragments):
        error = self.assertRaises(primitives.Malformed, casts.parse, args)
        for fragment in fragments:
            self.assertIn(fragment, str(error))
        self.assertLess(len(str(error)), 400)
        return error

    def test_not_the_arguments_at_all(self):
        for args in (None, [], 'x', {}, {'build_requests': []},
                     {'build_requests': [], 'request_specs': []}):
            self.assertMalformed(args, 'schedule_and_build_instances')

    def test_another_object_in_place_of_a_build_request(self):
        args = copy.deepcopy(self.args)
        args['build_requests'][0]['nova_object.name'] = 'Instance'
        self.assertMalformed(args, 'build_requests/0')

    def test_another_namespace_or_major_version(self):
        for key, value in (('nova_object.namespace', 'other'),
                           ('nova_object.version', '2.0'),
                           ('nova_object.version', '1'),
                           ('nova_object.version', 1.3)):
            args = copy.deepcopy(self.args)
            args['request_specs'][1][key] = value
            self.assertMalformed(args, 'request_specs/1')

    def test_a_later_minor_version_with_new_fields_is_read(self):
        args = copy.deepcopy(self.args)
        args['build_requests'][0]['nova_object.version'] = '1.9'
        self._instance(args)['a_field_from_nova_40'] = {'deep': [1, 2]}
        self.assertEqual(3, len(casts.parse(args).instances))

    def test_counts_that_do_not_pair(self):
        args = copy.deepcopy(self.args)
        del args['request_specs'][2]
        self.assertMalformed(args, '3 build requests but 2 request specs')

    def test_a_spec_paired_with_another_instance(self):
        args = copy.deepcopy(self.args)
        specs = args['request_specs']
        specs[0], specs[1] = specs[1], specs[0]
        self.assertMalformed(args, 'paired with the request spec')

    def test_the_same_instance_twice(self):
        args = copy.deepcopy(self.args)
        args['build_requests'][2] = args['build_requests'][0]
        args['request_specs'][2] = args['request_specs'][0]
        self.assertMalformed(args, 'appears twice')

    def test_instances_that_disagree(self):
        for field, value, what in (
                ('reservation_id', 'r-other', 'reservation'),
                ('user_id', 'mallory', 'user')):
            args = copy.deepcopy(self.args)
            self._instance(args, 1)[field] = value
            self.assertMalformed(args, f'differ in {what}')
        args = copy.deepcopy(self.args)
        _data(self._instance(args, 2)['flavor'])['vcpus'] = 64
        self.assertMalformed(args, 'differ in flavor')

    def test_a_project_other_than_the_build_request_s(self):
        args = copy.deepcopy(self.args)
        self._instance(args)['project_id'] = 'someone-else'
        self.assertMalformed(args, 'of project someone-else')

    def test_text_that_cannot_be_stored_or_is_too_long(self):
        for value in ('a\x00b', 'a\ud800b', 'x' * 256, 7, None):
            args = copy.deepcopy(self.args)
            self._instance(args)['reservation_id'] = value
            self.assertMalformed(args, 'reservation_id')

    def test_the_refusal_does_not_repeat_the_value(self):
        args = copy.deepcopy(self.args)
        self._instance(args)['display_name'] = 'secret-' + 'x' * 300
        error = self.assertMalformed(args, 'display_name', 'maxLength 255')
        self.assertNotIn('secret-', str(error))

    def test_metadata_out_of_bounds(self):
        for metadata in ({f'k{i}': 'v' for i in range(129)},
                         {'k': {'nested': 'v'}}, {'k': 'v' * 256},
                         {'k' * 256: 'v'}, ['k', 'v']):
            args = copy.deepcopy(self.args)
            self._instance(args)['metadata'] = metadata
            self.assertMalformed(args, 'metadata')

    def test_flavor_values_that_are_no_sizes(self):
        for value in (-1, 2 ** 31, True, '1', 1.5):
            args = copy.deepcopy(self.args)
            _data(self._instance(args)['flavor'])['memory_mb'] = value
            self.assertMalformed(args, 'memory_mb')

    def _with_specs(self, specs, indexes=(0, 1, 2)):
        args = copy.deepcopy(self.args)
        for index in indexes:
            _data(self._instance(args, index)['flavor'])['extra_specs'] = \
                copy.deepcopy(specs)
        return args

    def test_a_flavors_extra_specs_pass_through_to_the_spec(self):
        specs = {'resources:CUSTOM_FPGA': '1', 'trait:CUSTOM_SSD': 'required',
                 'hw:cpu_policy': 'dedicated'}
        boot = casts.parse(self._with_specs(specs))
        self.assertEqual(specs, boot.flavor['extra_specs'])
        self.assertEqual(specs, nova_door.spec_of(boot)['flavor'][
            'extra_specs'])

    def test_extra_specs_out_of_bounds_or_disagreeing(self):
        for specs in ({f'k{i}': 'v' for i in range(257)},
                      {'k': {'nested': 'v'}}, {'k': 'v' * 256},
                      {'k' * 256: 'v'}, {'k': 'a\x00b'}, ['k', 'v'], 'k=v'):
            self.assertMalformed(self._with_specs(specs), 'extra_specs')
        args = self._with_specs({'trait:CUSTOM_SSD': 'required'},
                                indexes=(0, 1))
        self.assertMalformed(args, 'differ in flavor')

    def test_too_many_instances(self):
        args = copy.deepcopy(self.args)
        args['build_requests'] = args['build_requests'] * 334
        args['request_specs'] = args['request_specs'] * 334
        self.assertMalformed(args, 'not maxItems 1000')

    def test_hints_out_of_bounds(self):
        for hints in ({'same_host': 'not-a-list'},
                      {'same_host': ['x'] * 65},
                      {f'h{i}': [] for i in range(65)}):
            args = copy.deepcopy(self.args)
            self._spec(args)['scheduler_hints'] = hints
            self.assertMalformed(args, 'scheduler_hints')

    def test_target_cell_from_nova_is_not_honoured(self):
        args = copy.deepcopy(self.args)
        self._spec(args)['scheduler_hints'] = {
            'target_cell': ['cell1'], 'different_host': ['a', 'b']}
        boot = casts.parse(args)
        self.assertEqual({'different_host': ['a', 'b']}, boot.hints)
        self.assertEqual(('target_cell',), boot.ignored_hints)


class UnsupportedTest(base.TestCase):
    """What cellboot cannot build is said, per request, never dropped."""

    def setUp(self):
        super().setUp()
        _record, message = captured('single')
        self.args = message['args']

    def _unsupported(self, change):
        args = copy.deepcopy(self.args)
        change(args, _data(args['request_specs'][0]),
               _data(_data(args['build_requests'][0])['instance']))
        return casts.parse(args).unsupported

    def test_a_volume(self):
        def change(args, spec, instance):
            device = _data(args['block_device_mapping'])['objects'][0]
            _data(device).update(source_type='volume',
                                 destination_type='volume',
                                 volume_id='v-1')
        self.assertEqual(('volumes (block device mappings beyond the '
                          'image)',), self._unsupported(change))

    def test_a_port_or_a_network(self):
        for values in ({'port_id': 'p-1', 'network_id': None},
                       {'network_id': 'net-1'}):
            def change(args, spec, instance):
                request = _data(args['requested_networks'])['objects'][0]
                _data(request).update(values)
            self.assertIn('requested ports or networks',
                          self._unsupported(change)[0])

    def test_forced_hosts_nodes_or_destination(self):
        for field, value in (('force_hosts', ['h1']),
                             ('force_nodes', ['n1']),
                             ('requested_destination', {'host': 'h1'})):
            def change(args, spec, instance):
                spec[field] = value
            self.assertEqual(('forced hosts or nodes',),
                             self._unsupported(change))

    def test_pci_or_numa(self):
        def pci(args, spec, instance):
            _data(spec['pci_requests'])['requests'] = [{'count': 1}]

        def numa(args, spec, instance):
            instance['numa_topology'] = {'cells': []}
        for change in (pci, numa):
            self.assertEqual(('PCI or NUMA requests',),
                             self._unsupported(change))

    def test_soft_affinity_but_not_affinity(self):
        def group(policy):
            def change(args, spec, instance):
                spec['instance_group'] = {
                    'nova_object.name': 'InstanceGroup',
                    'nova_object.namespace': 'nova',
                    'nova_object.version': '1.11',
                    'nova_object.data': {
                        'uuid': '1b8e2b3a-7d5c-4b53-9a3e-1f0f6a1d2c3b',
                        'policy': policy}}
            return change
        self.assertEqual(
            ('soft-affinity and soft-anti-affinity policies',),
            self._unsupported(group('soft-anti-affinity')))
        self.assertEqual((), self._unsupported(group('anti-affinity')))
        args = copy.deepcopy(self.args)
        group('affinity')(args, _data(args['request_specs'][0]), None)
        self.assertEqual('affinity', casts.parse(args).group['policy'])
