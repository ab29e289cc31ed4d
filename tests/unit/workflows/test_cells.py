"""``map-host-to-cell`` and ``create-in-cell`` on real databases."""

from oslo_db import exception as db_exc
from taskflow.types import failure

from cellboot.builds import fates
from cellboot import exception
from cellboot.objects import cell_mapping
from cellboot.objects import instance_action
from cellboot.scheduler import cell_clients
from cellboot.workflows.tasks import cells
from cellboot.workflows.tasks import schedule
from tests import base
from tests.unit.workflows import fleet


class _CellTaskTests:
    """A request scheduled to cell1 (h1, h2) or to cell2 (h3)."""

    def setUp(self):
        super().setUp()
        self.add_host('h1', cell=0)
        self.add_host('h2', cell=0)
        self.start_scheduler()

    def _schedule(self, count=1):
        store, uuids = self.request(count)
        store['selections'] = schedule.Schedule('schedule').execute(
            self.ctx, self.scheduler, store['request_spec'], uuids)
        return store, uuids

    def _map(self, store):
        store['cells'] = cells.MapHostToCell('map-host-to-cell').execute(
            self.ctx, self.scheduler, store['selections'],
            store['build_requests'], store['request_spec'])
        return store['cells']

    def _create(self, store):
        return cells.CreateInCell('create-in-cell').execute(
            self.ctx, self.scheduler, store['cells'], store['selections'],
            store['build_requests'], store['request_spec'],
            self.cell_mappings)

    def test_map_host_to_cell_finds_the_chosen_hosts_cell(self):
        store, (uuid,) = self._schedule()
        self.assertEqual({uuid: self.cells[0].uuid}, self._map(store))

    def test_unmapped_host_buries_that_instance_alone_in_cell0(self):
        self.add_host('h3', mapped=False)
        self.scheduler.refresh(self.ctx)
        store, uuids = self._schedule(2)
        store['selections'][uuids[1]][0]['service_host'] = 'h3'
        found = self._map(store)
        self.assertEqual({uuids[0]: self.cells[0].uuid, uuids[1]: None},
                         found)
        self.assertIn('Host h3 is not mapped to any cell',
                      self.fault_of(self.cell0, uuids[1]).details)
        self.assertEqual({}, self.held(uuids[1]))
        self.assertTrue(self.has_build_request(uuids[0]))

    def test_create_in_cell_creates_a_building_instance_on_its_host(self):
        store, (uuid,) = self._schedule()
        self._map(store)
        self.assertEqual({uuid: fates.OK}, self._create(store))
        instance = self.instance_in(self.cells[0], uuid)
        chosen = store['selections'][uuid][0]['service_host']
        # Scheduling until cast-to-compute hands it to its host.
        self.assertEqual(('building', 'scheduling', chosen, chosen,
                          'server-0'),
                         (instance.vm_state, instance.task_state,
                          instance.host, instance.node,
                          instance.display_name))

    def test_create_in_cell_starts_the_create_action(self):
        store, (uuid,) = self._schedule()
        self._map(store)
        self._create(store)
        with self.target(self.cells[0]) as cctxt:
            action = self.action_of(cctxt, uuid)
        self.assertEqual(('create', 'alice', 'p1'),
                         (action.action, action.user_id, action.project_id))

    def test_create_in_cell_replayed_counts_the_instance_as_created(self):
        store, (uuid,) = self._schedule()
        self._map(store)
        self._create(store)
        self.assertEqual({uuid: fates.OK}, self._create(store))

    def test_a_multi_create_creates_every_instance_and_action(self):
        store, uuids = self._schedule(3)
        self._map(store)
        self.assertEqual(dict.fromkeys(uuids, fates.OK), self._create(store))
        for uuid in uuids:
            instance = self.instance_in(self.cells[0], uuid)
            hosts = store['selections'][uuid]
            self.assertEqual(
                ('building', 'scheduling', hosts[0]['service_host'],
                 hosts[1:]),
                (instance.vm_state, instance.task_state, instance.host,
                 instance.build_args['host_list']))
            with self.target(self.cells[0]) as cctxt:
                self.assertEqual('create', self.action_of(cctxt, uuid).action)

    def test_a_replay_creates_only_what_is_missing(self):
        # The step died after one of the instances was created (its
        # chunk committed alone): the replay creates the others.
        store, uuids = self._schedule(3)
        self._map(store)
        first = dict(store, cells={uuids[0]: store['cells'][uuids[0]]})
        self._create(first)
        self.assertEqual(dict.fromkeys(uuids, fates.OK), self._create(store))
        with self.target(self.cells[0]) as cctxt:
            self.assertEqual(
                [1, 1, 1],
                [len(instance_action.InstanceAction.get_by_instance_uuid(
                    cctxt, uuid)) for uuid in uuids])

    def test_create_in_cell_skips_instances_buried_earlier(self):
        store, (uuid,) = self._schedule()
        store['cells'] = {uuid: None}
        self.assertEqual({uuid: fates.BURIED}, self._create(store))

    def test_a_cell_that_refuses_the_instance_buries_it_in_cell0(self):
        store, (uuid,) = self._schedule()
        self._map(store)
        cell = cell_mapping.CellMapping.get_by_uuid(self.ctx,
                                                    self.cells[0].uuid)
        cell.update(self.ctx, database_connection='sqlite:///' +
                    self.state_path + '/no/such/dir/cell.sqlite')
        self.assertEqual({uuid: fates.BURIED}, self._create(store))
        self.assertEqual('cell0', self.mapped_cell(uuid))
        self.assertEqual({}, self.held(uuid))

    def test_a_cell_that_cannot_be_reached_fails_the_step_to_wait(self):
        # Its database refuses connections (down, restarting): not the
        # instance's fault, so the step fails for the engine to run it
        # again (cellboot.flowrun.outages), and nothing is buried.
        self.flags(max_retries=0, group='database')
        store, (uuid,) = self._schedule()
        self._map(store)
        cell = cell_mapping.CellMapping.get_by_uuid(self.ctx,
                                                    self.cells[0].uuid)
        cell.update(self.ctx, database_connection='mysql+pymysql://'
                    'nobody@127.0.0.1:1/cell')
        self.assertRaises(db_exc.DBConnectionError, self._create, store)
        self.assertIsNone(self.mapped_cell(uuid))
        self.assertNotEqual({}, self.held(uuid))

    def test_revert_fails_created_instances_in_their_cell(self):
        store, (uuid,) = self._schedule()
        self._map(store)
        created = self._create(store)
        boom = failure.Failure.from_exception(RuntimeError('API DB gone'))
        cells.CreateInCell('create-in-cell').revert(
            self.ctx, self.scheduler, store['cells'], self.cell_mappings,
            result=created,
            flow_failures={'map-instance': boom})
        self.assertEqual('error',
                         self.instance_in(self.cells[0], uuid).vm_state)
        self.assertIn('API DB gone',
                      self.fault_of(self.cells[0], uuid).details)
        self.assertEqual('cell1', self.mapped_cell(uuid))
        self.assertFalse(self.has_build_request(uuid))
        self.assertEqual({}, self.held(uuid))

    def test_revert_leaves_uncreated_instances_to_schedule(self):
        store, (uuid,) = self._schedule()
        self._map(store)
        boom = failure.Failure.from_exception(RuntimeError('cell gone'))
        cells.CreateInCell('create-in-cell').revert(
            self.ctx, self.scheduler, store['cells'], self.cell_mappings,
            result=boom,
            flow_failures={'create-in-cell': boom})
        self.assertIsNone(self.mapped_cell(uuid))
        self.assertRaises(exception.InstanceNotFound, self.instance_in,
                          self.cells[0], uuid)


class _OfferingAnotherCellsHost(cell_clients.LocalCell):
    """cell1's scheduler as a compromised cell would answer: it claims
    on its own host, and names a host of another cell."""

    def __init__(self, cell_mapping, scheduler, host):
        super().__init__(cell_mapping, scheduler)
        self.host = host

    def select(self, context, spec, instance_uuids, return_alternates):
        selections, aggregate = super().select(context, spec, instance_uuids,
                                               return_alternates)
        for hosts in selections:
            hosts[0] = dict(hosts[0], service_host=self.host,
                            nodename=self.host)
        return selections, aggregate


class _HostInAnotherCellTests:
    """cell1 (h1) offers h3, a host mapped to cell2."""

    CELLS = 2

    def setUp(self):
        super().setUp()
        self.add_host('h1', cell=0)
        # Too small for the request: cell1 is the cell asked.
        self.add_host('h3', cell=1, vcpus=1, memory_mb=256)
        self.start_scheduler()
        self.scheduler.set_client(self.cells[0].uuid,
                                  _OfferingAnotherCellsHost(
                                      self.cells[0], self.cell_scheduler,
                                      'h3'))
        self.store, (self.uuid,) = self.request()
        self.store['selections'] = schedule.Schedule('schedule').execute(
            self.ctx, self.scheduler, self.store['request_spec'],
            [self.uuid])

    def _map(self):
        return cells.MapHostToCell('map-host-to-cell').execute(
            self.ctx, self.scheduler, self.store['selections'],
            self.store['build_requests'], self.store['request_spec'])

    def test_the_selection_names_the_cell_that_offered_it(self):
        chosen = self.store['selections'][self.uuid][0]
        self.assertEqual(('h3', self.cells[0].uuid),
                         (chosen['service_host'], chosen['cell_uuid']))

    def test_a_host_of_another_cell_is_refused_at_map_host_to_cell(self):
        self.assertEqual({self.uuid: None}, self._map())

    def test_the_refused_instance_is_buried_in_cell0_saying_why(self):
        self._map()
        self.assertEqual('cell0', self.mapped_cell(self.uuid))
        details = self.fault_of(self.cell0, self.uuid).details
        self.assertIn(f'The scheduler of cell {self.cells[0].uuid} offered '
                      f'host h3, which is mapped to another cell', details)

    def test_the_refused_instances_claim_is_released(self):
        self.assertNotEqual({}, self.held(self.uuid))
        self._map()
        self.assertEqual({}, self.held(self.uuid))


class SQLiteHostInAnotherCellTest(_HostInAnotherCellTests, base.SQLiteMixin,
                                  fleet.FleetTestCase):
    pass


class MySQLHostInAnotherCellTest(_HostInAnotherCellTests, base.MySQLMixin,
                                 fleet.FleetTestCase):
    pass


class PostgreSQLHostInAnotherCellTest(_HostInAnotherCellTests,
                                      base.PostgreSQLMixin,
                                      fleet.FleetTestCase):
    pass


class SQLiteCellTaskTest(_CellTaskTests, base.SQLiteMixin,
                         fleet.FleetTestCase):
    pass


class MySQLCellTaskTest(_CellTaskTests, base.MySQLMixin,
                        fleet.FleetTestCase):
    pass


class PostgreSQLCellTaskTest(_CellTaskTests, base.PostgreSQLMixin,
                             fleet.FleetTestCase):
    pass
