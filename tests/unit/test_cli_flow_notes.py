"""``cellboot flow show`` prints the operators' retries and abandon.

From a ``GET /os-flows/{id}`` answer, as the API serves it; a note of
the wrong shape prints nothing rather than failing the command.
"""

import contextlib
import io

from cellboot.cli import flows
from tests import base


def _printed(flow):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        flows._print_notes(flow)
    return out.getvalue().splitlines()


class FlowNotesTest(base.TestCase):

    def test_retries_and_the_abandon_are_printed_one_line_each(self):
        self.assertEqual(
            ['  Retried: 2026-01-01T10:00:00 by op-1 from FAILURE',
             '  Abandoned: 2026-01-01T11:00:00 by op-2 from SUSPENDED; '
             'reason: ticket 42 gave up'],
            _printed({
                'retries': [{'by': 'op-1', 'at': '2026-01-01T10:00:00',
                             'from_state': 'FAILURE'}],
                'abandoned': {'by': 'op-2', 'at': '2026-01-01T11:00:00',
                              'reason': 'ticket 42\ngave up',
                              'from_state': 'SUSPENDED',
                              'settled_at': None}}))

    def test_a_flow_nobody_acted_on_prints_nothing(self):
        self.assertEqual([], _printed({'retries': [], 'abandoned': None}))
        self.assertEqual([], _printed({}))
        self.assertEqual(['  Abandoned: None by None from None; reason: '
                          '(none given)'],
                         _printed({'abandoned': {}}))
        self.assertEqual([], _printed({'abandoned': 'yes'}))
