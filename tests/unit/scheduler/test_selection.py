"""Selections travel as plain dicts and come back unchanged."""

from cellboot.objects import selection
from tests import base as test_base


class SelectionTest(test_base.TestCase):

    def _selection(self):
        return selection.Selection(
            service_host='h', nodename='n', compute_node_uuid='u',
            cell_uuid='c', allocation_request={'VCPU': 2}, claimed=True)

    def test_round_trips_through_a_dict(self):
        values = self._selection().to_dict()
        self.assertEqual(values,
                         selection.Selection.from_dict(values).to_dict())

    def test_dict_does_not_share_the_allocation_request(self):
        chosen = self._selection()
        chosen.to_dict()['allocation_request']['VCPU'] = 99
        self.assertEqual({'VCPU': 2}, chosen.allocation_request)
