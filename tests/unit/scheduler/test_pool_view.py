"""``pools.view``: which pools may give what to which cell, in memory."""

import types

from cellboot.scheduler.pools import view
from tests import base


def pool(name, free, traits=(), cells=('c1',), rc='DISK_GB'):
    return {'uuid': f'uuid-{name}', 'name': name, 'capacity': {rc: free},
            'usages': {rc: 0}, 'traits': list(traits),
            'served_cells': list(cells)}


def node(cells, resources):
    """A cell view (one cell) or a zone (several), as the filters see."""
    return types.SimpleNamespace(
        cell_uuids=frozenset(cells), cell=types.SimpleNamespace(
            uuid=sorted(cells)[0]),
        aggregate={'resources': {rc: {'capacity': cap}
                                 for rc, cap in resources.items()}})


def request(resources, required=(), forbidden=()):
    inner = types.SimpleNamespace(required_traits=set(required),
                                  forbidden_traits=set(forbidden))
    return types.SimpleNamespace(resources=resources, request=inner)


class PoolPlanTest(base.TestCase):

    def test_a_cell_without_the_class_gets_the_best_pools_room(self):
        plan = view.PoolPlan([pool('a', 30), pool('b', 50)],
                             request({'VCPU': 1, 'DISK_GB': 20}))
        cell = node({'c1'}, {'VCPU': 8})
        self.assertEqual((50, 0), (plan.room(cell, 'DISK_GB'),
                                   plan.room(cell, 'VCPU')))
        self.assertEqual(['DISK_GB'], plan.note_cell(cell))
        self.assertEqual(
            [{'uuid': 'uuid-b', 'name': 'b', 'resources': {'DISK_GB': 20},
              'alternates': ['uuid-a']}], plan.choose('c1'))

    def test_a_cell_whose_hosts_have_the_class_is_never_given_a_pool(self):
        plan = view.PoolPlan([pool('a', 30)], request({'DISK_GB': 20}))
        cell = node({'c1'}, {'DISK_GB': 100})
        self.assertEqual((0, [], []), (plan.room(cell, 'DISK_GB'),
                                       plan.note_cell(cell),
                                       plan.choose('c1')))

    def test_pools_serve_only_their_cells_and_zones_below(self):
        plan = view.PoolPlan([pool('a', 30, cells=('c2',))],
                             request({'DISK_GB': 20}))
        self.assertEqual(0, plan.room(node({'c1'}, {}), 'DISK_GB'))
        self.assertEqual(30, plan.room(node({'c2'}, {}), 'DISK_GB'))
        # A zone is judged by any cell below it: never a false no.
        self.assertEqual(30, plan.room(node({'c1', 'c2'}, {'DISK_GB': 9}),
                                       'DISK_GB'))

    def test_a_forbidden_trait_rules_a_pool_out_a_required_one_not(self):
        pools = [pool('ssd', 10, traits=['CUSTOM_SSD']), pool('hdd', 99)]
        # Required traits qualify the host: a flavor requiring a CPU
        # trait still takes its disk from a pool, which has no CPU.
        plan = view.PoolPlan(pools, request({'DISK_GB': 5},
                                            required=['HW_CPU_X86_AVX2']))
        self.assertEqual(99, plan.room(node({'c1'}, {}), 'DISK_GB'))
        plan = view.PoolPlan(pools, request({'DISK_GB': 5},
                                            forbidden=['CUSTOM_SSD']))
        plan.note_cell(node({'c1'}, {}))
        self.assertEqual(['uuid-hdd'], [e['uuid'] for e in plan.choose('c1')])

    def test_no_pool_with_room_leaves_the_claim_to_name_the_class(self):
        plan = view.PoolPlan([pool('a', 3)], request({'DISK_GB': 20}))
        plan.note_cell(node({'c1'}, {}))
        (entry,) = plan.choose('c1')
        self.assertEqual((None, ['uuid-a'], {'DISK_GB': 20}),
                         (entry['uuid'], entry['alternates'],
                          entry['resources']))


class PoolViewTest(base.TestCase):

    def test_no_pool_no_plan_and_reads_are_bounded(self):
        reads = []

        def reader(context):
            reads.append(context)
            return []

        pools = view.PoolView(max_age=3600, reader=reader)
        for _ in range(5):
            self.assertIsNone(pools.plan('ctx', request({'VCPU': 1})))
        self.assertEqual(1, len(reads))
        pools.invalidate()
        pools.plan('ctx', request({'VCPU': 1}))
        self.assertEqual(2, len(reads))
