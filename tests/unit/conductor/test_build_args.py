"""``instances.build_args`` read back: nothing in it is taken on trust.

The column is in a cell's database, which that cell's services (and an
intruder in the cell) write. Whatever it holds, ``read`` returns the
shape ``make`` writes, or None (the build is then re-sent with no
alternates), and never raises.
"""

from oslo_serialization import jsonutils

from cellboot.objects import build_args
from tests import base

SELECTION = {'service_host': 'h2', 'nodename': 'h2',
             'compute_node_uuid': '6f1c2b8e-0000-4000-8000-000000000002',
             'cell_uuid': 'c1', 'allocation_request': {'VCPU': 1}}
RETRY = {'num_attempts': 1, 'hosts': [['h1', 'h1']], 'last_failure': 'x'}


def _stored(value):
    return jsonutils.dumps(value)


class ReadTest(base.TestCase):

    def test_what_make_writes_reads_back(self):
        args = build_args.make([SELECTION], {'flavor': {'vcpus': 1}}, RETRY)
        self.assertEqual(args, build_args.read(_stored(args)))

    def test_a_first_attempt_has_no_retry_state(self):
        args = build_args.make([], {}, None)
        self.assertEqual({'host_list': [], 'request_spec': {},
                          'retry': None}, build_args.read(_stored(args)))

    def test_nothing_stored_is_none(self):
        # Rows written before build_args existed.
        self.assertIsNone(build_args.read(None))

    def test_hostile_values_read_as_none(self):
        good = build_args.make([SELECTION], {}, RETRY)
        hostile = [
            'not json', '', '[]', '"a string"', '42', 'null', '{}',
            b'\xff\xfe',
            '[' * 100000 + ']' * 100000,
            _stored(dict(good, host_list='h2')),
            _stored(dict(good, host_list=[SELECTION, 'h3'])),
            _stored(dict(good, host_list=[dict(SELECTION,
                                               service_host=None)])),
            _stored(dict(good, host_list=[dict(SELECTION,
                                               allocation_request=[1])])),
            _stored(dict(good, request_spec=['flavor'])),
            _stored(dict(good, retry='again')),
            _stored(dict(good, retry=dict(RETRY, num_attempts='1'))),
            _stored(dict(good, retry=dict(RETRY, num_attempts=True))),
            _stored(dict(good, retry=dict(RETRY, hosts='h1'))),
            _stored({'request_spec': {}, 'retry': None}),
        ]
        for raw in hostile:
            self.assertIsNone(build_args.read(raw), repr(raw)[:80])

    def test_extra_keys_are_dropped(self):
        args = dict(build_args.make([], {}, None), factory='os.system')
        self.assertEqual(build_args.empty(), build_args.read(_stored(args)))
