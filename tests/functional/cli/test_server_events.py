"""``cellboot server event list | show`` against the API.

Every host fails its builds: the build fails in the cell it went to
first, is handed back, moved to the other cell and fails there too. Its
create action then holds the events of both cells, which the owner
reads as sentences and an administrator with hosts and details.
"""

from cellboot.builds import handback
from cellboot.cli import exit_codes
from cellboot.compute import build_records
from cellboot.objects import fault_messages
from tests.functional.cli import base

# What the owner must never read.
LEAKS = ('cell1', 'cell2', 'host1', 'fail_hosts', 'Details')


def _rows(text, width):
    """The data rows of the printed tables whose rows have ``width``
    cells (a table's header row included)."""
    rows = [[cell.strip() for cell in line.strip('|').split('|')]
            for line in text.splitlines() if line.startswith('|')]
    return [row for row in rows if len(row) == width]


class ServerEventsTest(base.CLITestCase):

    CELLS = 2
    HOSTS_PER_CELL = 1
    FAIL_HOSTS = ('cell1-host1', 'cell2-host1')

    def setUp(self):
        super().setUp()
        self.server_id = self.create(wait=True)

    def request_id(self, token=base.USER_TOKEN):
        result = self.cli('server', 'event', 'list', self.server_id,
                          token=token)
        self.assertEqual(0, result.code, result)
        header, *rows = _rows(result.out, 5)
        self.assertEqual(['Request ID', 'Action', 'Start Time', 'Updated',
                          'Message'], header)
        ((request_id, action, _start, _updated, message),) = rows
        self.assertEqual(('create', 'Error'), (action, message))
        return request_id

    def test_the_owner_reads_why_without_hosts_or_cells(self):
        result = self.cli('server', 'event', 'show', self.server_id,
                          self.request_id())
        self.assertEqual(0, result.code, result)
        fields = dict(_rows(result.out, 2))
        self.assertEqual(self.server_id, fields['instance_uuid'])
        header, *events = _rows(result.out, 5)
        self.assertEqual(['Event', 'Result', 'Start Time', 'Finish Time',
                          'Message'], header)
        shown = {(event[0], event[4]) for event in events}
        self.assertIn((build_records.EVENT_BUILD,
                       fault_messages.HOST_FAILED), shown)
        self.assertIn((handback.HANDBACK_EVENT, fault_messages.HANDED_BACK),
                      shown)
        for leak in LEAKS:
            self.assertNotIn(leak, result.out, leak)

    def test_an_admin_reads_both_cells_with_hosts_and_details(self):
        result = self.cli('server', 'event', 'show', self.server_id,
                          self.request_id(base.ADMIN_TOKEN),
                          token=base.ADMIN_TOKEN)
        self.assertEqual(0, result.code, result)
        header, *events = _rows(result.out, 7)
        self.assertEqual(['Host', 'Details'], header[5:])
        names = [event[0] for event in events]
        (carried,) = [name for name in names
                      if name.endswith(':' + handback.HANDBACK_EVENT)]
        self.assertIn(carried.split(':')[0], ('cell1', 'cell2'))
        self.assertIn(build_records.EVENT_BUILD, names)
        self.assertIn('fail_hosts', result.out)

    def test_unknown_and_others_servers_are_not_found(self):
        request_id = self.request_id()
        for args, token in (
                (('list', '00000000-0000-0000-0000-000000000000'),
                 base.USER_TOKEN),
                (('list', self.server_id), base.OTHER_TOKEN),
                (('show', self.server_id, request_id), base.OTHER_TOKEN),
                (('show', self.server_id, 'req-unknown'), base.USER_TOKEN)):
            result = self.cli('server', 'event', *args, token=token)
            self.assertOneLineError(result, exit_codes.NOT_FOUND,
                                    'could not be found')
        # Quoted into one path segment, which the API decodes: the path
        # is no path of the API, and no other resource is reached.
        for args in (('list', '../flavors'),
                     ('show', self.server_id, '../../detail')):
            result = self.cli('server', 'event', *args)
            self.assertOneLineError(result, exit_codes.NOT_FOUND,
                                    'No such path')

    def test_a_missing_request_id_is_a_usage_error(self):
        result = self.cli('server', 'event', 'show', self.server_id)
        self.assertOneLineError(result, exit_codes.USAGE, 'REQUEST_ID')
