"""A move to another cell through the super conductors' Redis jobboard.

The move's flow is posted on the board of its kind (``NAMESPACE.cross-
cell``) and run by whichever super conductor claims it, like a boot.
"""

from unittest import mock

from cellboot.conductor import handbacks
from cellboot.conductor import manager
from cellboot.flowrun import jobboard
from cellboot.flowrun import kinds
from tests.functional.boot import test_cross_cell
from tests import fixtures as cb_fixtures
from tests.functional import invariants


class CrossCellBoardTest(test_cross_cell._CrossCellTest):

    def test_a_handed_back_build_is_moved_through_the_board(self):
        lost = self.lose_hand_back_casts()
        uuid = self.boot_handed_back()
        lost.stop()
        redis = self.useFixture(cb_fixtures.Redis())
        self.flags(backend='redis', url=redis.url,
                   namespace=redis.namespace, group='jobboard')
        conductor = manager.SuperConductorManager(
            scheduler=self.cluster.scheduler)
        conductor.runner.owner = conductor.cross_cell_runner.owner = \
            'conductor:board'
        self.addCleanup(conductor.stop)
        conductor.start(self.ctx)
        self.assertEqual(
            f'{redis.namespace}.{kinds.KIND_CROSS_CELL}',
            conductor.cross_cell_runner.board.name)
        with mock.patch.object(jobboard, 'post', wraps=jobboard.post) as post:
            handbacks.HandedBack(conductor).sweep_once(self.ctx)
        self.assertEqual(kinds.KIND_CROSS_CELL, post.call_args.args[1])
        self.cluster.wait_for_quiet()
        cell, instance = self.cluster.find(uuid)
        self.assertEqual(('cell2', 'active'), (cell.name, instance.vm_state))
        self.assertEqual([], invariants.check_invariants(self.ctx))
