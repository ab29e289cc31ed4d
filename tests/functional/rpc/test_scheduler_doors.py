"""Where the scheduler is served, and with whose rights (``doors.plan``).

Each (bus, topic) is served once: the API's bus with every right, each
cell's topic with that cell's, the plain topic on a cell's own bus with
that cell's, and on a bus several cells share with none. Buses are
compared as buses, so a cell whose URL is the API's written otherwise
gets no second plain-topic server there.
"""

import fixtures
from oslo_utils import uuidutils

from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot import rpc
from cellboot.rpc import topics
from cellboot.scheduler import access
from cellboot.scheduler import doors
from tests import base

API_URL = 'rabbit://api:secret@127.0.0.1:5672/api'


class DoorsTest(base.DatabaseTestCase):

    def setUp(self):
        super().setUp()
        self.flags(transport_url=API_URL)
        self.admin = cb_context.get_admin_context()
        self.addCleanup(rpc.cleanup)
        self.log = self.useFixture(fixtures.FakeLogger(
            name=doors.__name__, format='%(levelname)s %(message)s'))
        cell_mapping.CellMapping.create(
            self.admin, 'cell0', 'sqlite://', 'none:///',
            uuid=cell_mapping.CELL0_UUID)

    def cell(self, name, transport_url):
        return cell_mapping.CellMapping.create(
            self.admin, name, f'sqlite:///{name}-{uuidutils.generate_uuid()}',
            transport_url)

    def served(self):
        """{(masked bus, topic): (access class, caller)} of the plan."""
        plan = doors.plan(self.admin)
        served = {(rpc.describe(door.transport), door.topic):
                  (type(door.access), door.access.caller) for door in plan}
        self.assertEqual(len(plan), len(served), 'a (bus, topic) twice')
        return served

    def test_cells_on_buses_of_their_own(self):
        cell1 = self.cell('cell1', 'rabbit://c1:pw@127.0.0.1:5672/cell1')
        cell2 = self.cell('cell2', 'rabbit://c2:pw@127.0.0.1:5672/cell2')
        api = 'rabbit://api:***@127.0.0.1:5672/api'
        bus1 = 'rabbit://c1:***@127.0.0.1:5672/cell1'
        bus2 = 'rabbit://c2:***@127.0.0.1:5672/cell2'
        caller1 = f'cell cell1 ({cell1.uuid})'
        caller2 = f'cell cell2 ({cell2.uuid})'
        self.assertEqual({
            (api, topics.SCHEDULER): (access.FullAccess,
                                      'the API transport'),
            (bus1, topics.scheduler('cell1')): (access.CellAccess, caller1),
            (bus1, topics.SCHEDULER): (access.CellAccess, caller1),
            (bus2, topics.scheduler('cell2')): (access.CellAccess, caller2),
            (bus2, topics.SCHEDULER): (access.CellAccess, caller2),
        }, self.served())
        self.assertEqual('', self.log.output)

    def test_cells_sharing_a_bus_get_their_topics_and_a_refusing_one(self):
        self.cell('cell1', 'rabbit://c1:pw@127.0.0.1:5672/cells')
        self.cell('cell2', 'rabbit://c2:pw@localhost/cells')
        served = self.served()
        bus = 'rabbit://c1:***@127.0.0.1:5672/cells'
        self.assertEqual(access.UnattributedAccess,
                         served[(bus, topics.SCHEDULER)][0])
        self.assertEqual(access.CellAccess,
                         served[(bus, topics.scheduler('cell2'))][0])
        self.assertEqual(4, len(served))
        self.assertIn('WARNING Cells cell1, cell2 share the bus',
                      self.log.output)

    def test_a_cell_on_the_api_bus_gets_its_topic_there_only(self):
        cell1 = self.cell('cell1', 'rabbit://cell1:pw@LOCALHOST/api')
        api = 'rabbit://api:***@127.0.0.1:5672/api'
        self.assertEqual({
            (api, topics.SCHEDULER): (access.FullAccess,
                                      'the API transport'),
            (api, topics.scheduler('cell1')): (access.CellAccess,
                                               f'cell cell1 ({cell1.uuid})'),
        }, self.served())
        self.assertIn("WARNING Cell(s) cell1 use the API's bus",
                      self.log.output)

    def test_a_cell_whose_url_is_broken_is_skipped(self):
        self.cell('broken', 'rabbit://u:pw@h:notaport/')
        self.cell('cell1', 'fake:///cell1')
        served = self.served()
        self.assertEqual({topics.SCHEDULER, topics.scheduler('cell1')},
                         {topic for _bus, topic in served})
        self.assertIn('ERROR Not serving cell broken', self.log.output)
        self.assertNotIn(':pw@', self.log.output)

    def test_a_scheduler_named_like_a_cell_is_refused(self):
        self.cell('sched1', 'fake:///sched1')
        exc = self.assertRaises(exception.ConfigurationError, doors.plan,
                                self.admin, 'sched1')
        self.assertIn('cellboot-scheduler.sched1', str(exc))
        self.assertEqual(3, len(doors.plan(self.admin, 'scheduler-host')))
