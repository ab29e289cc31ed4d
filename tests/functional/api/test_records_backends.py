"""What the API writes and deletes, on SQLite, MariaDB and PostgreSQL.

The HTTP tests run on the SQLite cluster; these hold the API's own
transactions (accepting a boot, deleting a server at each stage) to the
same specification on every backend.
"""

from unittest import mock

from cellboot.api import boot_requests
from cellboot.api import server_records
from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import build_request
from cellboot.objects import cell_mapping
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_mapping
from cellboot.objects import request_spec
from cellboot.scheduler import cells as cells_scheduler
from tests import base

FLAVOR = {'flavorid': 'small', 'name': 'small', 'vcpus': 1,
          'memory_mb': 512, 'root_gb': 10}
INSTANCE = {'display_name': 'vm', 'reservation_id': 'r-12345678',
            'flavor': FLAVOR, 'image_ref': 'cirros', 'metadata': {}}
SPEC = {'flavor': FLAVOR, 'num_instances': 2}


class _RecordsTests:

    def setUp(self):
        super().setUp()
        self.ctx = cb_context.RequestContext(user_id='alice',
                                             project_id='project-a')
        # The API level's scheduler, as the delete sees it: what it is
        # asked to release is checked, and no cell scheduler needs to be
        # serving (a real one would wait out its RPC timeout, 30 s).
        self.scheduler = mock.create_autospec(cells_scheduler.CellsScheduler,
                                              instance=True)

    def persist(self, count=2):
        build_requests, _specs = boot_requests.persist(self.ctx, count,
                                                       INSTANCE, SPEC)
        return [br['instance_uuid'] for br in build_requests]

    def in_cell(self, uuid):
        """Move a persisted server into a cell, as the boot flow does."""
        cell = cell_mapping.CellMapping.create(
            self.ctx, 'cell1', self.dbs.cell_urls[0], 'fake://')
        with cb_context.target_cell(self.ctx, cell) as cctxt:
            instance_obj.Instance.create(
                cctxt, uuid, 'project-a', instance_obj.vm_states.ACTIVE,
                user_id='alice', display_name='vm')
        instance_mapping.InstanceMapping.get_by_instance_uuid(
            self.ctx, uuid).set_cell(self.ctx, cell.uuid)
        build_request.BuildRequest.get_by_instance_uuid(
            self.ctx, uuid).destroy(self.ctx)
        return cell

    def test_persist_writes_every_row_of_every_instance(self):
        uuids = self.persist(count=3)
        for uuid in uuids:
            build_request.BuildRequest.get_by_instance_uuid(self.ctx, uuid)
            request_spec.RequestSpec.get_by_instance_uuid(self.ctx, uuid)
            mapping = instance_mapping.InstanceMapping.get_by_instance_uuid(
                self.ctx, uuid)
            self.assertIsNone(mapping.cell_mapping)

    def test_a_persist_that_fails_midway_writes_nothing(self):
        with mock.patch.object(boot_requests.uuidutils, 'generate_uuid',
                               return_value=SAMPLE_UUID):
            self.assertRaises(exception.BuildRequestExists, self.persist)
        self.assertEqual([], build_request.BuildRequest.get_all(self.ctx))
        self.assertEqual([], instance_mapping.InstanceMapping.get_by_project(
            self.ctx, 'project-a'))

    def test_deleting_a_build_request_removes_its_mapping_too(self):
        (uuid,) = self.persist(count=1)
        server_records.delete(self.ctx, uuid, self.scheduler)
        mappings = instance_mapping.InstanceMapping
        self.assertRaises(exception.InstanceMappingNotFound,
                          mappings.get_by_instance_uuid, self.ctx, uuid)
        self.assertRaises(exception.BuildRequestNotFound,
                          build_request.BuildRequest.get_by_instance_uuid,
                          self.ctx, uuid)

    def test_deleting_a_server_in_a_cell_soft_deletes_it_there(self):
        (uuid,) = self.persist(count=1)
        cell = self.in_cell(uuid)
        server_records.delete(self.ctx, uuid, self.scheduler)
        self.scheduler.release_resources.assert_called_once_with(self.ctx,
                                                                 uuid)
        with cb_context.target_cell(self.ctx, cell) as cctxt:
            instance = instance_obj.Instance.get_by_uuid(cctxt, uuid,
                                                         read_deleted=True)
        self.assertTrue(instance.deleted)
        self.assertTrue(instance_mapping.InstanceMapping.get_by_instance_uuid(
            self.ctx, uuid).queued_for_delete)

    def test_a_build_request_gone_to_its_cell_is_read_from_the_cell(self):
        (uuid,) = self.persist(count=1)
        self.in_cell(uuid)
        record = server_records.get(self.ctx, uuid)
        self.assertEqual('active', record.instance.vm_state)

    def test_another_project_does_not_find_the_server(self):
        (uuid,) = self.persist(count=1)
        bob = cb_context.RequestContext(user_id='bob', project_id='b')
        self.assertRaises(server_records.ServerNotFound, server_records.get,
                          bob, uuid)

    def test_the_listing_has_build_requests_and_cell_servers(self):
        pending, moved = self.persist(count=2)
        self.in_cell(moved)
        records = server_records.list_servers(self.ctx, 'project-a', 10,
                                              limit=10).records
        self.assertEqual(
            [(pending, 'BuildRequest'), (moved, 'InCell')],
            [(getattr(r, 'instance_uuid', None) or r.instance.uuid,
              type(r).__name__) for r in records])

    def test_pages_of_the_listing_walk_every_server_once(self):
        uuids = self.persist(count=5)
        cell = self.in_cell(uuids[1])
        for uuid in uuids[3:]:
            instance_mapping.InstanceMapping.get_by_instance_uuid(
                self.ctx, uuid).set_cell(self.ctx, cell.uuid)
            with cb_context.target_cell(self.ctx, cell) as cctxt:
                instance_obj.Instance.create(
                    cctxt, uuid, 'project-a', instance_obj.vm_states.ACTIVE)
            build_request.BuildRequest.get_by_instance_uuid(
                self.ctx, uuid).destroy(self.ctx)
        seen, marker, more = [], None, True
        while more:
            page = server_records.list_servers(self.ctx, 'project-a', 10,
                                               limit=2, marker=marker)
            seen += [getattr(r, 'instance_uuid', None) or r.instance.uuid
                     for r in page.records]
            marker, more = page.marker, page.more
        self.assertEqual(uuids, seen)

    def test_a_deleted_server_leaves_the_listing(self):
        first, second = self.persist(count=2)
        self.in_cell(second)
        server_records.delete(self.ctx, second, self.scheduler)
        self.scheduler.release_resources.assert_called_once_with(self.ctx,
                                                                 second)
        page = server_records.list_servers(self.ctx, 'project-a', 10,
                                           limit=5)
        self.assertEqual(([first], False),
                         ([r.instance_uuid for r in page.records],
                          page.more))


SAMPLE_UUID = '11111111-2222-3333-4444-555555555555'


class SQLiteRecordsTest(_RecordsTests, base.SQLiteMixin,
                        base.DatabaseTestCase):
    pass


class MySQLRecordsTest(_RecordsTests, base.MySQLMixin,
                       base.DatabaseTestCase):
    pass


class PostgreSQLRecordsTest(_RecordsTests, base.PostgreSQLMixin,
                            base.DatabaseTestCase):
    pass
