"""``map-instance``, ``delete-build-request`` and ``cast-to-compute``."""

from cellboot.api import server_records
from cellboot.builds import fates
from cellboot import exception
from cellboot.objects import build_request
from cellboot.objects import instance_mapping
from cellboot.workflows.tasks import cells
from cellboot.workflows.tasks import compute
from cellboot.workflows.tasks import mappings
from cellboot.workflows.tasks import schedule
from tests import base
from tests.unit.workflows import fleet


class _HandOverTests:
    """Instances created in cell1 (h1, h2), ready to be handed over."""

    def setUp(self):
        super().setUp()
        self.add_host('h1')
        self.add_host('h2')
        self.start_scheduler()
        self.store, self.uuids = self.request(2)
        store = self.store
        store['selections'] = schedule.Schedule('schedule').execute(
            self.ctx, self.scheduler, store['request_spec'], self.uuids)
        store['cells'] = cells.MapHostToCell('map-host-to-cell').execute(
            self.ctx, self.scheduler, store['selections'],
            store['build_requests'], store['request_spec'])
        store['created'] = cells.CreateInCell('create-in-cell').execute(
            self.ctx, self.scheduler, store['cells'], store['selections'],
            store['build_requests'], store['request_spec'],
            self.cell_mappings)

    def _map_instances(self):
        self.store['mapped'] = mappings.MapInstance('map-instance').execute(
            self.ctx, self.scheduler, self.store['cells'],
            self.store['created'], self.cell_mappings)
        return self.store['mapped']

    def _delete_build_requests(self):
        self.store['settled'] = mappings.DeleteBuildRequest(
            'delete-build-request').execute(
            self.ctx, self.scheduler, self.store['cells'],
            self.store['mapped'], self.cell_mappings)
        return self.store['settled']

    def _cast(self):
        return compute.CastToCompute('cast-to-compute').execute(
            self.ctx, self.scheduler, self.compute, self.store['cells'],
            self.store['selections'], self.store['settled'],
            self.store['request_spec'], self.cell_mappings)

    def _owner_deletes(self, uuid):
        """The owner deletes the server through the API's own code."""
        server_records.delete(self.ctx, uuid, self.scheduler)

    def _assert_cleaned_up(self, uuid):
        self.assertTrue(self.instance_in(self.cells[0], uuid,
                                         read_deleted=True).deleted)
        self.assertEqual({}, self.held(uuid))
        self.assertRaises(
            exception.InstanceMappingNotFound,
            instance_mapping.InstanceMapping.get_by_instance_uuid,
            self.ctx, uuid)
        self.assertFalse(self.has_build_request(uuid))

    def test_map_instance_points_the_mapping_at_the_cell(self):
        self.assertEqual(dict.fromkeys(self.uuids, fates.OK),
                         self._map_instances())
        self.assertEqual(['cell1', 'cell1'],
                         [self.mapped_cell(uuid) for uuid in self.uuids])

    def test_map_instance_replayed_counts_them_mapped(self):
        # A resumed flow runs the step again: mappings that point at the
        # cell already are there, not deleted servers.
        self._map_instances()
        self.assertEqual(dict.fromkeys(self.uuids, fates.OK),
                         self._map_instances())
        self.assertEqual(['cell1', 'cell1'],
                         [self.mapped_cell(uuid) for uuid in self.uuids])

    def test_map_instance_cleans_up_when_the_mapping_is_gone(self):
        self._owner_deletes(self.uuids[0])
        mapped = self._map_instances()
        self.assertEqual([fates.DELETED, fates.OK],
                         [mapped[uuid] for uuid in self.uuids])
        self._assert_cleaned_up(self.uuids[0])

    def test_delete_build_request_removes_them(self):
        self._map_instances()
        self.assertEqual(dict.fromkeys(self.uuids, fates.OK),
                         self._delete_build_requests())
        self.assertEqual([], build_request.BuildRequest.get_all(self.ctx))

    def test_build_request_gone_means_the_owner_deleted_the_server(self):
        self._map_instances()
        self._owner_deletes(self.uuids[1])
        settled = self._delete_build_requests()
        self.assertEqual([fates.OK, fates.DELETED],
                         [settled[uuid] for uuid in self.uuids])
        self._assert_cleaned_up(self.uuids[1])
        self.assertNotEqual({}, self.held(self.uuids[0]))

    def test_a_build_request_removed_by_an_earlier_run_is_no_delete(self):
        # A conductor died after this step removed the build requests and
        # before that was recorded: the resumed step finds them gone.
        self._map_instances()
        self._delete_build_requests()
        self.assertEqual(dict.fromkeys(self.uuids, fates.OK),
                         self._delete_build_requests())
        for uuid in self.uuids:
            self.assertFalse(self.instance_in(self.cells[0], uuid).deleted)
            self.assertNotEqual({}, self.held(uuid))

    def test_cast_sends_each_build_to_its_chosen_host(self):
        self._map_instances()
        self._delete_build_requests()
        self.assertEqual(
            {'scheduling'}, {self.instance_in(self.cells[0], uuid).task_state
                             for uuid in self.uuids})
        self.assertEqual(dict.fromkeys(self.uuids, fates.OK), self._cast())
        casts = self.compute.by_instance()
        for uuid in self.uuids:
            hosts = self.store['selections'][uuid]
            # Handed over before the cast: a host may take it.
            self.assertEqual(
                (hosts[0]['service_host'], hosts[1:],
                 compute.first_retry(), 'building', None, None),
                (casts[uuid]['host'], casts[uuid]['host_list'],
                 casts[uuid]['retry'],
                 casts[uuid]['instance']['vm_state'],
                 casts[uuid]['instance']['task_state'],
                 self.instance_in(self.cells[0], uuid).task_state))

    def test_cast_skips_instances_settled_otherwise(self):
        self._map_instances()
        self._owner_deletes(self.uuids[0])
        self._delete_build_requests()
        cast = self._cast()
        self.assertEqual(fates.DELETED, cast[self.uuids[0]])
        self.assertEqual([self.uuids[1]], list(self.compute.by_instance()))

    def test_a_cast_that_cannot_be_sent_leaves_the_build_to_resend(self):
        # The cell conductors' check of untaken builds sends it again:
        # the instance waits, building, untaken, with its claim and what
        # the cast carried.
        self._map_instances()
        self._delete_build_requests()
        self.compute.fail_with = RuntimeError('the cell bus is down')
        self.assertEqual(dict.fromkeys(self.uuids, fates.OK), self._cast())
        for uuid in self.uuids:
            instance = self.instance_in(self.cells[0], uuid)
            hosts = self.store['selections'][uuid]
            self.assertEqual(
                ('building', None, hosts[0]['service_host'],
                 {'host_list': hosts[1:],
                  'request_spec': self.store['request_spec'],
                  'retry': compute.first_retry()}),
                (instance.vm_state, instance.task_state, instance.host,
                 instance.build_args))
            self.assertIsNone(self.fault_of(self.cells[0], uuid))
            self.assertNotEqual({}, self.held(uuid))


class SQLiteHandOverTest(_HandOverTests, base.SQLiteMixin,
                         fleet.FleetTestCase):
    pass


class MySQLHandOverTest(_HandOverTests, base.MySQLMixin,
                        fleet.FleetTestCase):
    pass


class PostgreSQLHandOverTest(_HandOverTests, base.PostgreSQLMixin,
                             fleet.FleetTestCase):
    pass
