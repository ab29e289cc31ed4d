"""``cellboot server|flavor|hypervisor|flow list``: filters and formats.

The options reach the API's filters (a bad value is the API's 400, exit
code 6; what the token may not ask is exit code 5), and every list and
show prints as ``-f table|json|value`` and ``-c COLUMN`` say.
"""

import json

from cellboot.api import server_sort
from cellboot.cli import exit_codes
from cellboot.cli import servers as cli_servers
from tests.functional.cli import base


class ListCommandsTest(base.CLITestCase):

    def setUp(self):
        super().setUp()
        self.web = self.create('web-1', wait=True)
        self.db = self.create('db-1', wait=True)
        self.theirs = self.create('web-2', token=base.OTHER_TOKEN, wait=True)

    def run_ok(self, *args, token=base.USER_TOKEN):
        result = self.cli(*args, token=token)
        self.assertEqual(0, result.code, result)
        self.assertEqual('', result.err, result)
        return result.out

    def test_json_has_every_column_of_every_server(self):
        listed = json.loads(self.run_ok('server', 'list', '-f', 'json'))
        self.assertEqual({self.web, self.db}, {row['ID'] for row in listed})
        self.assertEqual({'ID', 'Name', 'Status', 'Host'}, set(listed[0]))
        self.assertEqual({'ACTIVE'}, {row['Status'] for row in listed})

    def test_value_prints_the_chosen_columns_in_their_order(self):
        out = self.run_ok('server', 'list', '-f', 'value', '-c', 'status',
                          '-c', 'ID')
        self.assertEqual(sorted([f'ACTIVE {self.web}', f'ACTIVE {self.db}']),
                         sorted(out.splitlines()))

    def test_an_unknown_column_is_a_usage_error(self):
        result = self.cli('server', 'list', '-c', 'Secret')
        self.assertOneLineError(result, exit_codes.USAGE, "'Secret'",
                                'ID, Name, Status, Host')

    def test_filters_reach_the_api(self):
        out = self.run_ok('server', 'list', '--name', '^web', '-f', 'value',
                          '-c', 'ID')
        self.assertEqual([self.web], out.split())
        out = self.run_ok('server', 'list', '--status', 'error', '-f',
                          'value')
        self.assertEqual('', out)

    def test_sort_key_and_dir_reach_the_api(self):
        by_name = ['server', 'list', '--sort-key', 'display_name', '-f',
                   'value', '-c', 'ID']
        self.assertEqual([self.db, self.web], self.run_ok(*by_name).split())
        self.assertEqual([self.web, self.db], self.run_ok(
            *by_name, '--sort-dir', 'desc').split())

    def test_the_sort_keys_offered_are_the_apis(self):
        self.assertEqual(server_sort.SORT_KEYS, cli_servers.SORT_KEYS)

    def test_an_unknown_sort_key_or_dir_is_a_usage_error(self):
        for option, value in (('--sort-key', 'password'),
                              ('--sort-dir', 'up')):
            result = self.cli('server', 'list', option, value)
            self.assertEqual(exit_codes.USAGE, result.code, result)
            self.assertIn(option, result.err)

    def test_a_bad_filter_is_the_apis_bad_request(self):
        result = self.cli('server', 'list', '--status', 'SLEEPY')
        self.assertOneLineError(result, exit_codes.BAD_REQUEST,
                                "'SLEEPY' is not a status")
        result = self.cli('server', 'list', '--name', '(')
        self.assertOneLineError(result, exit_codes.BAD_REQUEST,
                                'regular expression')

    def test_a_user_may_not_list_other_projects_or_hosts(self):
        for args in (('--all-projects',), ('--host', 'cell1-host1')):
            result = self.cli('server', 'list', *args)
            self.assertOneLineError(result, exit_codes.AUTH)
            self.assertNotIn(self.theirs, result.out)
        result = self.cli('server', 'list', '--project', 'project-b')
        self.assertOneLineError(result, exit_codes.USAGE, '--all-projects')

    def test_an_admin_lists_every_project_with_a_project_column(self):
        listed = json.loads(self.run_ok('server', 'list', '--all-projects',
                                        '-f', 'json',
                                        token=base.ADMIN_TOKEN))
        self.assertEqual({self.web: 'project-a', self.db: 'project-a',
                          self.theirs: 'project-b'},
                         {row['ID']: row['Project'] for row in listed})
        out = self.run_ok('server', 'list', '--all-projects', '--project',
                          'project-b', '-f', 'value', '-c', 'ID',
                          token=base.ADMIN_TOKEN)
        self.assertEqual([self.theirs], out.split())

    def test_show_as_json_and_one_value(self):
        shown = json.loads(self.run_ok('server', 'show', self.web, '-f',
                                       'json', token=base.ADMIN_TOKEN))
        self.assertEqual(('web-1', 'ACTIVE'), (shown['name'],
                                               shown['status']))
        self.assertIn('host', shown)
        self.assertEqual('ACTIVE\n', self.run_ok(
            'server', 'show', self.web, '-f', 'value', '-c', 'status',
            token=base.ADMIN_TOKEN))

    def test_flavor_list(self):
        out = self.run_ok('flavor', 'list', '-f', 'value', '-c', 'ID')
        self.assertIn('small', out.split())

    def test_hypervisor_list_is_for_admins(self):
        listed = json.loads(self.run_ok('hypervisor', 'list', '-f', 'json',
                                        token=base.ADMIN_TOKEN))
        self.assertEqual(self.CELLS * self.HOSTS_PER_CELL, len(listed))
        # One vCPU for each of the three servers, whoever's.
        self.assertEqual(3, sum(row['vCPUs Used'] for row in listed))
        result = self.cli('hypervisor', 'list')
        self.assertOneLineError(result, exit_codes.AUTH)

    def test_flow_list_is_for_admins(self):
        listed = json.loads(self.run_ok('flow', 'list', '--server', self.web,
                                        '-f', 'json',
                                        token=base.ADMIN_TOKEN))
        self.assertTrue(listed)
        self.assertTrue(all(self.web in row['Servers'] for row in listed))
        self.assertIn('SUCCESS', {row['State'] for row in listed})
        result = self.cli('flow', 'list')
        self.assertOneLineError(result, exit_codes.AUTH)
        result = self.cli('flow', 'list', '--state', 'nonsense',
                          token=base.ADMIN_TOKEN)
        self.assertOneLineError(result, exit_codes.BAD_REQUEST)
