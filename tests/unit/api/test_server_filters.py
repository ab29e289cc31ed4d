"""The ``name`` filter's guard against expressions that backtrack.

What passes the guard matches the longest name, made to make
backtracking hurt, in well under 10 ms; what could not is refused.
"""

import re
import time

from cellboot.api import server_filters
from tests import base

RISKY = ('(a+)+', '(a*)*b', '((a+))+', '(?:a|aa)+', '(a|aa){2,}',
         r'(\w+\s?)*$', '(x[ab]+)+', '(a+){3}', r'\w*\w*\d', 'a+a+a+b',
         'a?' * 40 + 'a' * 40, r'\??' * 40 + '!', 'a*?b*', '(a|b)*',
         '[a-z]+[0-9]+')
SAFE = ('web', r'^web-\d+$', '(ab)+', '(?:db|web)-1', '[(]+a', r'\(a\)+',
        '(a)?', 'x{2,5}', 'a*?b', '(?P<n>web)-1', '^(?:db|web)$', r'\?+x',
        '[*+?{]x+')


class RiskyPatternTest(base.TestCase):

    def test_repeated_groups_that_repeat_or_alternate_are_risky(self):
        for pattern in RISKY:
            self.assertTrue(server_filters._risky(pattern), pattern)

    def test_plain_expressions_pass(self):
        for pattern in SAFE:
            self.assertFalse(server_filters._risky(pattern), pattern)
            re.compile(pattern)

    def test_what_passes_matches_a_hostile_name_quickly(self):
        name = 'a' * 254 + '!'
        for pattern in SAFE + (r'^(ab|cd)\w+$', r'.*\d', r'\w+!x'):
            self.assertFalse(server_filters._risky(pattern), pattern)
            started = time.monotonic()
            re.compile(pattern).search(name)
            self.assertLess(time.monotonic() - started, 0.01, pattern)
