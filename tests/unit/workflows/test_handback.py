"""The record of the cells a build tried, and when it may move on."""

from cellboot.builds import handback
from cellboot import exception
from tests import base

CELL1 = '11111111-1111-4111-8111-111111111111'
CELL2 = '22222222-2222-4222-8222-222222222222'


class CellsTriedTest(base.TestCase):

    def test_a_spec_without_a_record_tried_no_cell(self):
        self.assertEqual([], handback.cells_tried({}))
        self.assertEqual([], handback.cells_tried(None))

    def test_malformed_records_count_nothing(self):
        for record in ('cell1', ['cell1'], {'cells': [42, 'x', {}]},
                       {'cells': [{'uuid': 7}]}):
            with self.subTest(record=record):
                self.assertEqual([], handback.cells_tried(
                    {handback.SPEC_KEY: record}))

    def test_leaving_a_cell_twice_records_it_once(self):
        spec = handback.with_cell_left({'flavor': {}}, CELL1, 'cell1', 'x')
        spec = handback.with_cell_left(spec, CELL1, 'cell1', 'y')
        self.assertEqual(([{'uuid': CELL1, 'name': 'cell1'}], 'y'),
                         (handback.cells_tried(spec),
                          handback.last_failure(spec)))

    def test_a_long_failure_is_cut(self):
        spec = handback.with_cell_left({}, CELL1, 'cell1', 'x' * 5000)
        self.assertEqual(1000, len(handback.last_failure(spec)))


class MayHandBackTest(base.TestCase):

    def test_the_first_cell_hands_back_by_default(self):
        self.assertTrue(handback.may_hand_back({}))

    def test_the_second_cell_does_not_with_max_cells_two(self):
        spec = handback.with_cell_left({}, CELL1, 'cell1', 'x')
        self.assertFalse(handback.may_hand_back(spec))
        self.flags(max_cells=3, group='conductor')
        self.assertTrue(handback.may_hand_back(spec))

    def test_nobody_hands_back_with_the_option_off(self):
        self.flags(cross_cell_reschedule=False, group='conductor')
        self.assertFalse(handback.may_hand_back({}))


class GiveUpTest(base.TestCase):

    def test_one_cell_keeps_the_words_of_an_exhausted_reschedule(self):
        error = handback.give_up(['cell1'], 'boom')
        self.assertIsInstance(error, exception.MaxRetriesExceeded)
        self.assertEqual('Exceeded maximum number of retries. Exhausted the '
                         'alternate hosts of its cell; last failure: boom',
                         str(error))

    def test_several_cells_are_all_named(self):
        self.assertEqual('Exceeded maximum number of retries. Tried '
                         'cell(s) cell1, cell2; last failure: boom',
                         str(handback.give_up(['cell1', 'cell2'], 'boom')))

    def test_a_burial_names_the_cells_left(self):
        spec = handback.with_cell_left({}, CELL1, 'cell1', 'no host')
        error = handback.with_cells_tried(
            exception.NoValidHost(reason='cell2 is full.'), spec)
        self.assertIsInstance(error, exception.MaxRetriesExceeded)
        self.assertIn('cell1', str(error))
        self.assertIn('cell2 is full', str(error))
        self.assertIn('no host', str(error))
