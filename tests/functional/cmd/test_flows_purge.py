"""``cellboot-manage flows purge`` on SQLite and MariaDB.

The deployment of ``test_purge`` (servers deleted long ago, flows in
every state in the flow database and in cell1's database): the flows
purge removes exactly the flows ``db purge`` removes, and nothing else
(no server, no API row), since it is the same code run for flows only.
"""

import datetime

from oslo_utils import timeutils

from tests import base as test_base
from tests.functional.cmd import base
from tests.functional.cmd import test_purge


class _FlowsPurgeTests(test_purge._Deployment):

    def flows_purge(self, *args):
        return self.manage('flows', 'purge', '--ended-before',
                           test_purge.BEFORE, *args)

    def not_flows(self, snapshot):
        return {key: rows for key, rows in snapshot.items()
                if key[1] not in test_purge.FLOW_TABLES}

    def test_purges_ended_flows_everywhere_and_nothing_else(self):
        self.deployment()
        before = self.snapshot()
        result = self.flows_purge()
        self.assertSucceeded(result)
        self.assertEqual(['boot-FAILURE', 'boot-PENDING', 'boot-RUNNING',
                          'boot-SUCCESS-lately'],
                         self.names(test_purge.keys(
                             self.flow_url, 'flowdetails', 'uuid')))
        self.assertEqual(self.names(test_purge.keys(
            self.flow_url, 'flowdetails', 'uuid')), self.names(
            test_purge.keys(self.flow_url, 'logbooks', 'uuid')))
        self.assertEqual(8, len(test_purge.keys(self.flow_url,
                                                'atomdetails', 'uuid')))
        self.assertEqual(['reschedule-RUNNING'], self.names(
            test_purge.keys(self.cell1_url, 'flowdetails', 'uuid')))
        self.assertEqual(self.not_flows(before),
                         self.not_flows(self.snapshot()))
        self.assertIn('Done: ', result.stdout)
        self.assertIn('(ended before 2021-01-01T00:00:00 UTC)',
                      result.stdout)
        self.assertNotIn('API database', result.stdout)
        self.assertNotIn('cell0', result.stdout)

    def test_dry_run_counts_what_the_purge_deletes(self):
        self.deployment()
        before = self.snapshot()
        dry = self.flows_purge('--dry-run')
        self.assertSucceeded(dry)
        self.assertEqual(before, self.snapshot())
        real = self.flows_purge('--verbose', '--batch-size', '1')
        self.assertSucceeded(real)
        after = self.snapshot()
        gone = sum(len(set(before[key]) - set(after[key])) for key in before)
        # 3 flows of 2 atoms, each in its logbook: 12 rows.
        self.assertEqual(12, gone)
        self.assertIn(f'Dry run: nothing deleted: {gone} rows to purge',
                      dry.stdout)
        self.assertIn(f'Done: {gone} rows purged', real.stdout)
        self.assertIn('flow database: 2 ended flows purged so far',
                      real.stderr_lines)
        self.assertIn('cell cell1: 1 ended flows purged so far',
                      real.stderr_lines)

    def test_bad_dates_are_refused_and_nothing_deleted(self):
        self.deployment()
        before = self.snapshot()
        future = (timeutils.utcnow() + datetime.timedelta(days=1)).date()
        for value, fragment in (('yesterday', 'not a date'),
                                ('2021-02-30', 'not a date'),
                                ('', 'not a date'),
                                (future.isoformat(), 'future')):
            result = self.manage('flows', 'purge', '--ended-before', value)
            self.assertOneLineError(result, 2, fragment)
        self.assertOneLineError(self.manage('flows', 'purge'), 2,
                                '--ended-before')
        self.assertOneLineError(
            self.manage('flows', 'purge', '--ended-before',
                        test_purge.BEFORE, '--batch-size', 'x'),
            2, '--batch-size')
        self.assertEqual(before, self.snapshot())


class SQLiteFlowsPurgeTest(_FlowsPurgeTests, test_base.SQLiteMixin,
                           base.ManageTestCase):
    pass


class MySQLFlowsPurgeTest(_FlowsPurgeTests, test_base.MySQLMixin,
                          base.ManageTestCase):
    pass
