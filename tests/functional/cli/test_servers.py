"""``cellboot server create | list | show | delete`` against the API."""

import re

from cellboot.cli import client
from cellboot.cli import exit_codes
from cellboot.cli import servers
from cellboot import context as cb_context
from cellboot.objects import zone
from cellboot.objects import fault_messages
from tests.functional.cli import base

_UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                   r'[0-9a-f]{12}')


def _rows(table):
    """The data rows of a printed table, as lists of cell texts."""
    lines = [line for line in table.splitlines() if line.startswith('|')]
    return [[cell.strip() for cell in line.strip('|').split('|')]
            for line in lines[1:]]


class ServerCommandsTest(base.CLITestCase):

    def test_create_prints_the_new_servers_id(self):
        result = self.cli('server', 'create', 'web', '--flavor', 'small')
        self.assertEqual(0, result.code, result)
        self.assertRegex(result.out.strip(), f'^{_UUID.pattern}$')

    def test_create_wait_shows_every_server_of_a_multi_create_active(self):
        result = self.cli('server', 'create', 'web', '--flavor', 'small',
                          '--count', '3', '--wait')
        self.assertEqual(0, result.code, result)
        rows = _rows(result.out)
        self.assertEqual(3, len(rows), result)
        self.assertEqual({'ACTIVE'}, {row[2] for row in rows})

    def test_create_with_an_unknown_flavor_is_a_bad_request(self):
        result = self.cli('server', 'create', 'web', '--flavor', 'huge')
        self.assertOneLineError(result, exit_codes.BAD_REQUEST, 'huge')

    def test_create_without_a_flavor_is_a_usage_error(self):
        result = self.cli('server', 'create', 'web')
        self.assertOneLineError(result, exit_codes.USAGE, '--flavor')

    def test_create_with_a_count_of_zero_is_a_usage_error(self):
        result = self.cli('server', 'create', 'web', '--flavor', 'small',
                          '--count', '0')
        self.assertOneLineError(result, exit_codes.USAGE, '--count')

    def test_list_shows_only_the_projects_own_servers(self):
        mine = self.create('mine')
        self.create('theirs', base.OTHER_TOKEN)
        rows = _rows(self.cli('server', 'list').out)
        self.assertEqual([mine], [row[0] for row in rows])

    def test_show_gives_status_and_name(self):
        server_id = self.create(wait=True)
        result = self.cli('server', 'show', server_id)
        self.assertEqual(0, result.code, result)
        fields = dict(_rows(result.out))
        self.assertEqual('ACTIVE', fields['status'])
        self.assertEqual('web', fields['name'])

    def test_show_to_an_admin_has_the_host_and_the_atoms_of_the_flow(self):
        server_id = self.create(wait=True)
        result = self.cli('server', 'show', server_id,
                          token=base.ADMIN_TOKEN)
        self.assertEqual(0, result.code, result)
        self.assertIn('| host ', result.out)
        fields = dict(row for row in _rows(result.out) if len(row) == 2)
        self.assertEqual(self.deployment.computes[fields['host']].cell_name,
                         fields['cell'])
        for atom in ('schedule', 'map-host-to-cell', 'create-in-cell',
                     'cast-to-compute'):
            self.assertIn(f'| {atom} ', result.out)

    def test_show_to_a_user_has_no_flow_trail(self):
        server_id = self.create()
        result = self.cli('server', 'show', server_id)
        self.assertEqual(0, result.code, result)
        self.assertNotIn('schedule', result.out)

    def test_show_of_an_unknown_server_is_not_found(self):
        result = self.cli('server', 'show', 'no-such-server')
        self.assertOneLineError(result, exit_codes.NOT_FOUND,
                                'no-such-server')

    def test_show_of_another_projects_server_is_not_found(self):
        server_id = self.create(token=base.OTHER_TOKEN)
        result = self.cli('server', 'show', server_id)
        self.assertOneLineError(result, exit_codes.NOT_FOUND, server_id)

    def test_delete_removes_the_server(self):
        server_id = self.create()
        result = self.cli('server', 'delete', server_id)
        self.assertEqual(0, result.code, result)
        self.assertEqual(exit_codes.NOT_FOUND,
                         self.cli('server', 'show', server_id).code)

    def test_delete_of_an_unknown_server_is_not_found(self):
        result = self.cli('server', 'delete', 'no-such-server')
        self.assertOneLineError(result, exit_codes.NOT_FOUND,
                                'no-such-server')


class FailingBuildsTest(base.CLITestCase):
    """Every host fails its builds: the servers end in ERROR."""

    CELLS = 1
    FAIL_HOSTS = ('cell1-host1',)

    def test_create_wait_exits_not_active_when_a_server_fails(self):
        result = self.cli('server', 'create', 'web', '--flavor', 'small',
                          '--wait')
        self.assertEqual(exit_codes.NOT_ACTIVE, result.code, result)
        self.assertEqual(['ERROR'], [row[2] for row in _rows(result.out)])
        server_id = _rows(result.out)[0][0]
        self.assertEqual([f'ERROR: server web ({server_id}) is ERROR: '
                          f'{fault_messages.RETRIES_EXCEEDED}'],
                         result.err.splitlines(), result)

    def test_create_wait_tells_each_failed_server_of_a_multi_create(self):
        result = self.cli('server', 'create', 'web', '--flavor', 'small',
                          '--count', '2', '--wait')
        self.assertEqual(exit_codes.NOT_ACTIVE, result.code, result)
        lines = result.err.splitlines()
        self.assertEqual(2, len(lines), result)
        for row in _rows(result.out):
            self.assertIn(f'({row[0]}) is ERROR: '
                          f'{fault_messages.RETRIES_EXCEEDED}', result.err)
        self.assertNotIn('Traceback', result.err)

    def test_show_of_a_failed_server_has_its_fault(self):
        server_id = self.create(wait=True)
        fields = dict(_rows(self.cli('server', 'show', server_id).out))
        self.assertEqual('ERROR', fields['status'])
        self.assertIn('fault', fields)

    def test_a_user_reads_the_fault_without_the_host(self):
        server_id = self.create(wait=True)
        result = self.cli('server', 'show', server_id)
        fields = dict(_rows(result.out))
        self.assertEqual(fault_messages.RETRIES_EXCEEDED, fields['fault'])
        self.assertNotIn('fault details', fields)
        self.assertNotIn('cell1-host1', result.out)

    def test_an_admin_reads_the_fault_details_with_the_host(self):
        server_id = self.create(wait=True)
        rows = _rows(self.cli('server', 'show', server_id,
                              token=base.ADMIN_TOKEN).out)
        # The flow trail that follows has more columns.
        fields = dict(row for row in rows if len(row) == 2)
        self.assertIn('cell1-host1', fields['fault details'])


class HostZoneTest(base.CLITestCase):
    """A server reads back the zone of the host it landed on."""

    CELLS = 1
    CONFIG = {('compute', 'availability_zone'): 'zone-ops'}

    def _boot(self, **server):
        user = client.Client(self.deployment.url, base.USER_TOKEN)
        server.update(name='web', flavorRef='small', imageRef='cirros')
        answer = user.post('/servers', {'server': server})
        [found] = servers.wait_for(user, [answer['server']['id']],
                                   timeout=60)
        self.assertEqual('ACTIVE', found['status'], found)
        return found['OS-EXT-AZ:availability_zone']

    def test_a_server_that_asked_no_zone_shows_its_hosts(self):
        self.assertEqual('zone-ops', self._boot())

    def test_a_server_that_asked_a_zone_of_cells_shows_its_hosts(self):
        # 'east' is a zone of the tree above the cells, not a host's:
        # the boot lands in its cell, on a host of zone 'zone-ops'.
        ctx = cb_context.get_admin_context()
        east = zone.Zone.create(ctx, 'east')
        self.deployment.cells[0].update(ctx, zone_uuid=east.uuid)
        self.deployment.scheduler.refresh(ctx)
        self.assertEqual('zone-ops', self._boot(availability_zone='east'))
