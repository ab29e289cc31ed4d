"""How ``cellboot-manage flows`` prints what ``lookup`` found.

Pure functions of ``cellboot.cmd.manage.flows``: the owner's age, the
Since column, resumptions, the JSON record and the ``--state`` and
``--older-than`` argument types.
"""

import argparse
import datetime
import json

from cellboot.cmd.manage import flows
from tests import base

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 11, 22, 8, 33, 13, 500000, tzinfo=UTC)


def _summary(**values):
    """A ``lookup`` summary of a flow, with ``values`` replaced."""
    summary = {
        'uuid': 'f1', 'name': 'boot', 'kind': 'boot', 'state': 'RUNNING',
        'corrupt': None, 'instance_uuids': ['i1', 'i2'], 'conductor': 'ctl1',
        'owner': 'ctl2:4242',
        'since': datetime.datetime(2026, 11, 22, 8, 30, 1, tzinfo=UTC),
        'resumptions': [{'by': 'ctl2:4242', 'at': '2026-11-22T08:30:01',
                         'from_state': 'RUNNING'}],
        'request_id': 'req-1', 'started_at': '2026-11-22T08:20:00.123456',
        'duration': None,
        'created_at': datetime.datetime(2026, 11, 22, 8, 20, 0),
        'updated_at': None, 'location': 'flow database', 'meta': {}}
    summary.update(values)
    return summary


class FormatAgeTest(base.TestCase):

    def test_each_unit_with_the_next_smaller_one(self):
        self.assertEqual(
            ['0s', '59s', '1m00s', '3m12s', '59m59s', '1h00m', '2h05m',
             '23h59m', '1d00h', '3d04h'],
            [flows.format_age(seconds) for seconds in (
                0, 59, 60, 192, 3599, 3600, 7500, 86399, 86400,
                3 * 86400 + 4 * 3600 + 59)])


class FormatSinceTest(base.TestCase):

    def test_iso_time_to_the_second_and_age(self):
        self.assertEqual(
            '2026-11-22T08:30:01Z (3m12s ago)',
            flows.format_since(
                datetime.datetime(2026, 11, 22, 8, 30, 1, tzinfo=UTC), NOW))

    def test_another_zone_is_printed_in_utc(self):
        plus_one = datetime.timezone(datetime.timedelta(hours=1))
        self.assertEqual(
            '2026-11-22T08:30:01Z (3m12s ago)',
            flows.format_since(
                datetime.datetime(2026, 11, 22, 9, 30, 1, tzinfo=plus_one),
                NOW))

    def test_a_time_ahead_of_this_clock_says_in(self):
        self.assertEqual(
            '2026-11-22T08:33:20Z (in 6s)',
            flows.format_since(
                datetime.datetime(2026, 11, 22, 8, 33, 20, tzinfo=UTC), NOW))

    def test_no_time_is_empty(self):
        self.assertEqual('', flows.format_since(None, NOW))


class FormatResumptionTest(base.TestCase):

    def test_when_by_whom_and_from_which_state(self):
        self.assertEqual(
            '2026-11-22T08:30:01Z  by ctl2:4242     from RUNNING',
            flows.format_resumption(
                {'by': 'ctl2:4242', 'at': '2026-11-22T08:30:01.5',
                 'from_state': 'RUNNING'}, by_width=12))

    def test_missing_or_unreadable_values_are_shown_as_written(self):
        self.assertEqual(
            'yesterday  by ?  from ?',
            flows.format_resumption(
                {'by': None, 'at': 'yesterday', 'from_state': None}))


class ListRowTest(base.TestCase):

    def test_a_row_has_owner_since_and_resumed_count(self):
        self.assertEqual(
            ['f1', 'boot', 'RUNNING', 'i1 (+1 more)', 'ctl2:4242',
             '2026-11-22T08:30:01Z (3m12s ago)', 1, '', 'flow database'],
            flows.list_row(_summary(), NOW))

    def test_a_corrupt_flows_state_says_so(self):
        self.assertEqual('CORRUPT (RUNNING)', flows.list_row(
            _summary(corrupt="its kind 'x' is none"), NOW)[2])


class ListRecordTest(base.TestCase):

    def test_a_record_is_plain_json_with_utc_times(self):
        record = flows.list_record(_summary(), NOW)

        self.assertEqual(record, json.loads(json.dumps(record)))
        self.assertEqual(
            ('ctl2:4242', '2026-11-22T08:30:01Z', 192, 1,
             '2026-11-22T08:20:00Z', '2026-11-22T08:20:00Z', None,
             ['i1', 'i2']),
            (record['owner'], record['since'], record['age_seconds'],
             record['resumed'], record['started_at'], record['created_at'],
             record['updated_at'], record['instance_uuids']))
        self.assertNotIn('meta', record)

    def test_a_record_says_why_a_flow_is_corrupt(self):
        record = flows.list_record(_summary(corrupt="its kind 'x' is none"),
                                   NOW)
        self.assertEqual(("its kind 'x' is none", 'RUNNING'),
                         (record['corrupt'], record['state']))

    def test_a_records_resumption_times_are_utc_as_since_is(self):
        record = flows.list_record(_summary(resumptions=[
            {'by': 'a:1', 'at': '2026-11-22T08:30:01.25', 'from_state': 'X'},
            {'by': 'b:2', 'at': 'garbled', 'from_state': None}]), NOW)
        self.assertEqual(['2026-11-22T08:30:01Z', 'garbled'],
                         [entry['at'] for entry in record['resumptions']])

    def test_a_flow_without_a_known_time_has_no_age(self):
        record = flows.list_record(_summary(since=None, started_at=None),
                                   NOW)
        self.assertEqual((None, None, None),
                         (record['since'], record['age_seconds'],
                          record['started_at']))


class ArgumentTypesTest(base.TestCase):

    def test_state_in_any_case_is_taskflows_name(self):
        self.assertEqual(['RUNNING', 'REVERTED'],
                         [flows.flow_state('running'),
                          flows.flow_state('Reverted')])

    def test_an_unknown_state_names_the_valid_ones(self):
        error = self.assertRaises(argparse.ArgumentTypeError,
                                  flows.flow_state, 'stuck')
        self.assertIn("'stuck' is no flow state", str(error))
        for state in flows.FLOW_STATES:
            self.assertIn(state, str(error))

    def test_older_than_takes_zero_or_more_seconds(self):
        self.assertEqual([0.0, 300.0, 1.5],
                         [flows.seconds(text) for text in ('0', '300', '1.5')])

    def test_older_than_refuses_negatives_and_non_numbers(self):
        for text in ('-1', 'an hour', 'nan', ''):
            self.assertRaises(argparse.ArgumentTypeError, flows.seconds,
                              text)
