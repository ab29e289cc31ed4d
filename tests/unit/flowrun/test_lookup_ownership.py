"""Who owns a flow and since when, read from its meta (``lookup``).

A flow's meta says who runs it (``owner``, ``owned_since``) only once a
conductor took it over, or once conductors record it; before that its
creator (``conductor``, ``started_at``) owns it. Readers must give the
same answer for both, and survive what a foreign writer may leave.
"""

import datetime

from oslo_utils import uuidutils
from taskflow.persistence import models
from taskflow import states

from cellboot import context as cb_context
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import schema as flow_schema
from cellboot.objects import cell_mapping
from cellboot.flowrun import lookup
from cellboot.flowrun import summaries
from tests import base
from tests import fixtures as cb_fixtures

UTC = datetime.timezone.utc
NOON = datetime.datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


class ParseTimeTest(base.TestCase):

    def test_naive_iso_text_is_utc(self):
        self.assertEqual(NOON, summaries.parse_time('2026-11-22T12:00:00'))

    def test_iso_text_with_z_or_an_offset_is_converted_to_utc(self):
        self.assertEqual(
            [NOON, NOON],
            [summaries.parse_time('2026-11-22T12:00:00Z'),
             summaries.parse_time('2026-11-22T13:00:00+01:00')])

    def test_a_naive_datetime_is_utc(self):
        self.assertEqual(NOON, summaries.parse_time(
            datetime.datetime(2026, 11, 22, 12, 0, 0)))

    def test_nothing_or_garbage_is_none(self):
        self.assertEqual([None, None, None, None],
                         [summaries.parse_time(value)
                          for value in (None, '', 'yesterday', 42)])


class OwnershipTest(base.TestCase):

    def test_owner_and_owned_since_win_over_conductor_and_start(self):
        owner, since, _ = summaries.ownership({
            'conductor': 'ctl1', 'started_at': '2026-11-22T11:00:00',
            'owner': 'ctl2:42', 'owned_since': '2026-11-22T12:00:00'})
        self.assertEqual(('ctl2:42', NOON), (owner, since))

    def test_a_flow_never_taken_over_is_its_conductors_since_its_start(self):
        owner, since, resumptions = summaries.ownership({
            'conductor': 'ctl1', 'started_at': '2026-11-22T12:00:00'})
        self.assertEqual(('ctl1', NOON, []), (owner, since, resumptions))

    def test_an_unreadable_owned_since_falls_back_to_the_start(self):
        _, since, _ = summaries.ownership({
            'owned_since': 'soon', 'started_at': '2026-11-22T12:00:00'})
        self.assertEqual(NOON, since)

    def test_a_flow_without_meta_times_is_owned_since_its_row_was_made(self):
        owner, since, _ = summaries.ownership(
            None, created_at=datetime.datetime(2026, 11, 22, 12, 0, 0))
        self.assertEqual((None, NOON), (owner, since))

    def test_resumptions_keep_their_three_keys_in_order(self):
        _, _, resumptions = summaries.ownership({'resumptions': [
            {'by': 'a:1', 'at': '2026-11-22T11:00:00', 'from_state': 'RUNNING',
             'extra': 'dropped'},
            {'by': 'b:2', 'at': '2026-11-22T12:00:00',
             'from_state': 'REVERTING'}]})
        self.assertEqual(
            [{'by': 'a:1', 'at': '2026-11-22T11:00:00',
              'from_state': 'RUNNING'},
             {'by': 'b:2', 'at': '2026-11-22T12:00:00',
              'from_state': 'REVERTING'}], resumptions)

    def test_malformed_resumptions_are_read_as_far_as_they_go(self):
        self.assertEqual(
            [[], [{'by': 'a:1', 'at': None, 'from_state': None}]],
            [summaries.ownership({'resumptions': 'twice'})[2],
             summaries.ownership({'resumptions': [
                 'a string', {'by': 'a:1'}]})[2]])


class FindFlowsOwnershipTest(base.TestCase):
    """Summaries carry owner/since/resumptions; ``since_before`` filters.

    Flows are written through TaskFlow's persistence API into a flow
    database and one cell database, as conductors write them.
    """

    def setUp(self):
        super().setUp()
        dbs = self.useFixture(cb_fixtures.DatabasesFixture(cells=1))
        self.flow_url = self.useFixture(cb_fixtures.Database()).url
        self.flags(connection=self.flow_url, group='flow_persistence')
        for url in (self.flow_url, dbs.cell_urls[0]):
            flow_schema.sync_tables(url)
        self.ctx = cb_context.get_admin_context()
        cell_mapping.CellMapping.create(self.ctx, 'cell1', dbs.cell_urls[0],
                                        'fake://')
        self.old = self.write(self.flow_url, states.RUNNING,
                              conductor='ctl1',
                              started_at='2026-11-22T11:00:00',
                              owner='ctl2:42',
                              owned_since='2026-11-22T11:30:00',
                              resumptions=[{'by': 'ctl2:42',
                                            'at': '2026-11-22T11:30:00',
                                            'from_state': 'RUNNING'}])
        self.new = self.write(dbs.cell_urls[0], states.RUNNING,
                              conductor='cell-cond',
                              started_at='2026-11-22T12:30:00')

    def write(self, url, state, **meta):
        book = models.LogBook('flows')
        flow_detail = models.FlowDetail('boot', uuidutils.generate_uuid())
        flow_detail.state = state
        flow_detail.meta = dict(meta, kind='boot', instance_uuids=[])
        book.add(flow_detail)
        flow_db.get_connection(url).save_logbook(book)
        return flow_detail.uuid

    def test_summaries_say_who_owns_each_flow_since_when(self):
        found = {flow['uuid']: flow
                 for flow in lookup.find_flows_everywhere(self.ctx)}
        self.assertEqual(
            [('ctl2:42', NOON - datetime.timedelta(minutes=30), 1),
             ('cell-cond', NOON + datetime.timedelta(minutes=30), 0)],
            [(found[uuid]['owner'], found[uuid]['since'],
              len(found[uuid]['resumptions']))
             for uuid in (self.old, self.new)])

    def test_since_before_keeps_the_flows_owned_since_before_it(self):
        found = lookup.find_flows_everywhere(self.ctx, state=states.RUNNING,
                                             since_before=NOON)
        self.assertEqual([self.old], [flow['uuid'] for flow in found])
