"""The argparse types the command lines share."""

import argparse

from cellboot.cli import arguments
from tests import base


class PositiveIntTest(base.TestCase):

    def test_whole_numbers_from_one_are_taken(self):
        self.assertEqual([1, 42], [arguments.positive_int(text)
                                   for text in ('1', '42')])

    def test_anything_else_is_refused_saying_what_is_wanted(self):
        for text in ('0', '-3', '2.5', 'many', '', '1e3'):
            exc = self.assertRaises(argparse.ArgumentTypeError,
                                    arguments.positive_int, text)
            self.assertEqual(f'must be a whole number of at least 1, not '
                             f'{text!r}', str(exc))


class NonNegativeIntTest(base.TestCase):

    def test_zero_and_up_are_taken_below_is_refused(self):
        self.assertEqual([0, 5], [arguments.non_negative_int(text)
                                  for text in ('0', '5')])
        for text in ('-1', 'none', '0.5'):
            exc = self.assertRaises(argparse.ArgumentTypeError,
                                    arguments.non_negative_int, text)
            self.assertEqual(f'must be a whole number of at least 0, not '
                             f'{text!r}', str(exc))
