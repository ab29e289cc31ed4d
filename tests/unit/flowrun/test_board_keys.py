"""Where the conductors' Redis keys are: a prefix of each cell's own.

That a cell's ACL pattern covers its keys and no other is proven against
Redis itself (``tests.functional.jobboard.test_cell_acl``).
"""

from cellboot.flowrun import board_keys
from tests import base


class BoardKeysTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(namespace='region1', group='jobboard')

    def test_boards_and_locks_are_named_after_the_namespace_and_cell(self):
        self.assertEqual(
            ('region1.boot', 'region1.sweeper.boot',
             'region1.cell.cell2.reschedule', 'region1.cell.cell2.sweeper'),
            (board_keys.board_name('boot'), board_keys.sweep_lock_name(),
             board_keys.board_name('reschedule', 'cell2'),
             board_keys.sweep_lock_name('cell2')))

    def test_cross_cell_flows_have_a_board_of_their_own(self):
        # Not the boot board: its conductor would refuse their jobs.
        self.assertEqual('region1.cross-cell',
                         board_keys.board_name('cross-cell'))

    def test_other_characters_of_a_cell_name_are_written_as_bytes(self):
        self.assertEqual(
            ('cell-1_a', 'cell1%2Ex', 'z%C3%BCrich', '%2A', '%2541'),
            tuple(board_keys.cell_key_name(name) for name in
                  ('cell-1_a', 'cell1.x', 'zürich', '*', '%41')))

    def test_a_cells_pattern_is_its_prefix_with_wildcards_escaped(self):
        self.flags(namespace='deploy*[a]?\\', group='jobboard')
        self.assertEqual(r'deploy\*\[a\]\?\\.cell.c%2A.*',
                         board_keys.acl_key_pattern('c*'))
