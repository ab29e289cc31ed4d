"""The Nova mirror's passes, against Nova-schema databases made here.

nova-api's databases are stood in for by SQLite databases with the
tables the mirror touches (``cellboot.nova.tables``, as Nova 34 has
them); nova-api's own part (a build request and a cell-less mapping
per server, a delete) is written straight into them. The real nova-api
against MariaDB is ``tests/functional/nova/test_nova_api.py``; these
tests take the mirror through what is hard to time there: a pass cut
short, a build request that is not nova-api's, deletes at each stage.
"""

import datetime
import json
import os
from unittest import mock

import fixtures
import sqlalchemy as sa

from cellboot.conductor import nova_door
from cellboot.conductor import nova_mirror
from cellboot import context as cb_context
from cellboot.db.cell import connection as cell_db
from cellboot.nova import store
from cellboot.nova import tables
from cellboot.objects import fault_messages
from tests import base
from tests.functional import cluster
from tests.functional import invariants
from tests.unit.nova import test_casts
from tests.unit.nova import test_instance_rows

CELL1_ID = 2


class NovaMirrorTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=2))
        state = self.useFixture(fixtures.TempDir()).path
        urls = {name: 'sqlite:///' + os.path.join(state, f'nova_{name}.db')
                for name in ('api', 'cell0', 'cell1')}
        self.api = cell_db.get_engine(urls['api'])
        tables.API.create_all(self.api)
        self.cells = {}
        for name in ('cell0', 'cell1'):
            self.cells[name] = cell_db.get_engine(urls[name])
            tables.CELL.create_all(self.cells[name])
        with self.api.begin() as conn:
            conn.execute(sa.insert(tables.CELL_MAPPINGS), [
                {'id': 1, 'uuid': store.CELL0_UUID, 'name': 'cell0',
                 'database_connection': urls['cell0']},
                {'id': CELL1_ID, 'uuid': 'c1', 'name': 'cell1',
                 'database_connection': urls['cell1']}])
        self.mirror = nova_mirror.NovaMirror(self.cluster.super_conductor,
                                             urls['api'])
        self.ctx = self.cluster.ctx

    # -- nova-api's part -------------------------------------------------

    def _nova_asks(self, uuid, stored=None):
        """What nova-api writes for a server before it casts."""
        if stored is None:
            (instance,) = test_instance_rows.stored_instances('single')
            instance['nova_object.data']['uuid'] = uuid
            stored = json.dumps(instance)
        with self.api.begin() as conn:
            conn.execute(sa.insert(tables.INSTANCE_MAPPINGS).values(
                instance_uuid=uuid, cell_id=None, project_id='p',
                queued_for_delete=False))
            conn.execute(sa.insert(tables.BUILD_REQUESTS).values(
                instance_uuid=uuid, project_id='p', instance=stored))

    def _nova_lost(self, name, age=600, spec_text=None):
        """nova-api's rows of capture ``name``, written ``age`` s ago,
        whose cast never reached cellboot; (uuids, the cast's args)."""
        _record, message = test_casts.captured(name)
        args = message['args']
        written = store.utcnow() - datetime.timedelta(seconds=age)
        uuids = []
        with self.api.begin() as conn:
            for request, spec in zip(args['build_requests'],
                                     args['request_specs']):
                fields = request['nova_object.data']
                uuid = fields['instance_uuid']
                uuids.append(uuid)
                conn.execute(sa.insert(tables.INSTANCE_MAPPINGS).values(
                    instance_uuid=uuid, cell_id=None,
                    project_id=fields['project_id'],
                    queued_for_delete=False))
                conn.execute(sa.insert(tables.BUILD_REQUESTS).values(
                    instance_uuid=uuid, project_id=fields['project_id'],
                    instance=json.dumps(fields['instance']),
                    block_device_mappings=json.dumps(
                        fields['block_device_mappings']),
                    tags=json.dumps(fields['tags']), created_at=written))
                conn.execute(sa.insert(tables.REQUEST_SPECS).values(
                    instance_uuid=uuid,
                    spec=spec_text or json.dumps(spec)))
        return uuids, message

    def _nova_deletes_build_request(self, uuid):
        with self.api.begin() as conn:
            conn.execute(sa.delete(tables.BUILD_REQUESTS).where(
                tables.BUILD_REQUESTS.c.instance_uuid == uuid))
            conn.execute(sa.update(tables.INSTANCE_MAPPINGS).where(
                tables.INSTANCE_MAPPINGS.c.instance_uuid == uuid).values(
                queued_for_delete=True))

    def _built(self, count=1):
        uuids = self.cluster.boot(count)
        self.cluster.wait_for_quiet()
        for uuid in uuids:
            self._nova_asks(uuid)
        return uuids

    # -- reading nova-api's databases --------------------------------------

    def _rows(self, cell, table, **where):
        query = sa.select(table).where(*(
            table.c[name] == value for name, value in where.items()))
        with self.cells[cell].connect() as conn:
            return conn.execute(query).all()

    def _nova_api(self, uuid):
        """(mapping's cell id, whether a build request is left)."""
        with self.api.connect() as conn:
            cell_id = conn.execute(sa.select(
                tables.INSTANCE_MAPPINGS.c.cell_id).where(
                tables.INSTANCE_MAPPINGS.c.instance_uuid == uuid)).scalar()
            left = conn.execute(sa.select(
                tables.BUILD_REQUESTS.c.id).where(
                tables.BUILD_REQUESTS.c.instance_uuid == uuid)).first()
        return cell_id, left is not None

    def _sweep(self):
        return self.mirror.sweep_once(self.ctx)

    # -- the tests -----------------------------------------------------------

    def test_a_built_server_is_placed_once(self):
        uuids = self._built(2)
        self.assertEqual({'placed': 2, 'followed': 0, 'recovered': 0,
                          'deleted': 0}, self._sweep())
        for uuid in uuids:
            _cell, ours = self.cluster.find(uuid)
            (row,) = self._rows('cell1', tables.INSTANCES, uuid=uuid)
            self.assertEqual(('active', None, 1, ours.host, ours.node, 0),
                             (row.vm_state, row.task_state, row.power_state,
                              row.host, row.node, row.deleted))
            self.assertEqual((CELL1_ID, False), self._nova_api(uuid))
        self.assertEqual({'placed': 0, 'followed': 0, 'recovered': 0,
                          'deleted': 0}, self._sweep())
        self.assertEqual(2, len(self._rows('cell1', tables.INSTANCE_EXTRA)))

    def test_a_pass_cut_short_is_finished_without_writing_twice(self):
        (uuid,) = self._built()
        with mock.patch.object(store, 'place',
                               side_effect=RuntimeError('killed here')):
            self.assertRaises(RuntimeError, self._sweep)
        self.assertEqual((None, True), self._nova_api(uuid))
        self.assertEqual(1, self._sweep()['placed'])
        for table in tables.INSTANCE_TABLES[:3]:
            key = 'uuid' if table is tables.INSTANCES else 'instance_uuid'
            self.assertEqual(1, len(self._rows('cell1', table,
                                               **{key: uuid})), table.name)

    def test_an_instance_in_build_follows_cellboot(self):
        (uuid,) = self._built()
        self._sweep()
        with self.cells['cell1'].begin() as conn:
            conn.execute(sa.update(tables.INSTANCES).values(
                vm_state='building', task_state='spawning', power_state=0))
        self.assertEqual(1, self._sweep()['followed'])
        (row,) = self._rows('cell1', tables.INSTANCES, uuid=uuid)
        self.assertEqual(('active', None, 1),
                         (row.vm_state, row.task_state, row.power_state))

    def test_an_error_is_mirrored_with_its_fault(self):
        self.flags(fail_hosts=['cell1-host1', 'cell1-host2'],
                   group='fake_driver')
        (uuid,) = self._built()
        self.assertEqual(1, self._sweep()['placed'])
        (row,) = self._rows('cell1', tables.INSTANCES, uuid=uuid)
        (fault,) = self._rows('cell1', tables.INSTANCE_FAULTS,
                              instance_uuid=uuid)
        self.assertEqual(('error', fault_messages.RETRIES_EXCEEDED),
                         (row.vm_state, fault.message))

    def test_a_server_deleted_in_its_cell_is_deleted_in_cellboot(self):
        doomed, kept = self._built(2)
        self._sweep()
        self.assertTrue(self.cluster.allocations(doomed))
        store.soft_delete(self.cells['cell1'], doomed, store.utcnow())
        self.assertEqual(1, self._sweep()['deleted'])
        _cell, ours = self.cluster.find(doomed)
        self.assertTrue(ours.deleted)
        self.assertEqual({}, self.cluster.allocations(doomed))
        self.assertFalse(self.cluster.find(kept)[1].deleted)
        self.assertEqual(0, self._sweep()['deleted'])
        self.assertEqual([], invariants.check_invariants())

    def test_a_server_deleted_while_a_build_request_is_deleted(self):
        (uuid,) = self._built()
        self._nova_deletes_build_request(uuid)
        self.assertEqual({'placed': 0, 'followed': 0, 'recovered': 0,
                          'deleted': 1},
                         self._sweep())
        self.assertTrue(self.cluster.find(uuid)[1].deleted)
        self.assertEqual({}, self.cluster.allocations(uuid))
        self.assertEqual([], self._rows('cell1', tables.INSTANCES))
        self.assertEqual(0, self._sweep()['deleted'])
        self.assertEqual([], invariants.check_invariants())

    def test_a_delete_racing_the_placement_wins(self):
        (uuid,) = self._built()
        real_place = store.place

        def deleted_first(*args):
            self._nova_deletes_build_request(uuid)
            return real_place(*args)

        with mock.patch.object(store, 'place', side_effect=deleted_first):
            self.assertEqual(1, self._sweep()['deleted'])
        (row,) = self._rows('cell1', tables.INSTANCES, uuid=uuid)
        self.assertNotEqual(0, row.deleted)
        self.assertEqual((None, False), self._nova_api(uuid))
        self.assertTrue(self.cluster.find(uuid)[1].deleted)
        self.assertEqual([], invariants.check_invariants())

    def test_a_build_request_that_is_not_nova_s_is_not_mirrored(self):
        hostile, fine = self.cluster.boot(2)
        self.cluster.wait_for_quiet()
        self._nova_asks(hostile, stored=json.dumps(
            {'nova_object.name': 'Instance', 'nova_object.data': {
                'uuid': hostile, 'display_name': 'x' * 10000}}))
        self._nova_asks(fine)
        logged = self.useFixture(fixtures.FakeLogger())
        self.assertEqual(1, self._sweep()['placed'])
        self._sweep()
        self.assertEqual((None, True), self._nova_api(hostile))
        self.assertEqual([], self._rows('cell1', tables.INSTANCES,
                                        uuid=hostile))
        self.assertEqual(1, logged.output.count(
            f'Server {hostile}: nova-api\'s build request cannot be '
            f'mirrored'))
        self.assertNotIn('x' * 100, logged.output)

    def test_a_lost_cast_is_built_from_nova_s_rows_once(self):
        fresh, _message = self._nova_lost('single', age=5)
        self.assertEqual(0, self._sweep()['recovered'])
        uuids, message = self._nova_lost('multi_create_3')
        self.assertEqual(3, self._sweep()['recovered'])
        self.cluster.wait_for_quiet()
        self.assertEqual(['active'] * 3, [self.cluster.find(uuid)[1].vm_state
                                          for uuid in uuids])
        self.assertEqual(3, self._sweep()['placed'])
        for uuid in uuids:
            self.assertEqual((CELL1_ID, False), self._nova_api(uuid))
        # The cast was only late: it finds the request accepted.
        context = cb_context.RequestContext(
            user_id=message['_context_user_id'],
            project_id=message['_context_project_id'])
        self.assertTrue(nova_door.build(self.cluster.super_conductor,
                                        context, message['args'], 'late'))
        self.cluster.wait_for_quiet()
        self.assertEqual([1] * 3, [len(self.cluster.flows(uuid))
                                   for uuid in uuids])
        self.assertEqual((None, True), self._nova_api(fresh[0]))
        self.assertEqual([], invariants.check_invariants())

    def test_a_lost_request_the_pass_did_not_read_whole_waits(self):
        uuids, _message = self._nova_lost('multi_create_3')
        with mock.patch.object(nova_mirror, 'BATCH', 2):
            self.assertEqual(0, self._sweep()['recovered'])
        self.assertEqual(3, self._sweep()['recovered'])
        self.cluster.wait_for_quiet()
        self.assertEqual(['active'] * 3, [self.cluster.find(uuid)[1].vm_state
                                          for uuid in uuids])

    def test_lost_rows_that_are_not_nova_s_build_nothing(self):
        logged = self.useFixture(fixtures.FakeLogger())
        (uuid,), _message = self._nova_lost('single', spec_text='{"spec"')
        self.assertEqual(0, self._sweep()['recovered'])
        self._sweep()
        self.assertEqual(1, logged.output.count(
            f'Server {uuid}: its cast was lost and nova-api\'s rows of it '
            f'cannot be read'))
        self.assertEqual([], self.cluster.flows(uuid))

    def test_a_lost_request_the_door_refuses_is_shown_in_error(self):
        (uuid,), _message = self._nova_lost('single', spec_text=json.dumps(
            {'nova_object.name': 'Migration', 'nova_object.data': {}}))
        self.assertEqual(0, self._sweep()['recovered'])
        self.assertEqual((1, False), self._nova_api(uuid))
        (row,) = self._rows('cell0', tables.INSTANCES, uuid=uuid)
        (fault,) = self._rows('cell0', tables.INSTANCE_FAULTS,
                              instance_uuid=uuid)
        self.assertEqual(('error', 500, fault_messages.INTERNAL_ERROR),
                         (row.vm_state, fault.code, fault.message))
        self.assertIn('refused nova-api\'s rows', fault.details)
        self.assertEqual([], self.cluster.flows(uuid))
        self._sweep()
        self.assertEqual(1, len(self._rows('cell0', tables.INSTANCE_FAULTS)))

    def test_lost_rows_the_door_cannot_read_are_shown_in_error(self):
        (uuid,), _message = self._nova_lost('single')
        with self.api.begin() as conn:
            conn.execute(sa.update(tables.BUILD_REQUESTS).values(
                block_device_mappings='{"objects": '))
        self.assertEqual(0, self._sweep()['recovered'])
        self.assertEqual((1, False), self._nova_api(uuid))
        (fault,) = self._rows('cell0', tables.INSTANCE_FAULTS,
                              instance_uuid=uuid)
        self.assertIn('block device mappings: not JSON', fault.details)
        self.assertEqual([], self.cluster.flows(uuid))

    def test_a_cell_no_nova_cell_mirrors_is_left_alone(self):
        self.flags(cells={'cell1': 'nowhere'}, group='nova')
        (uuid,) = self._built()
        logged = self.useFixture(fixtures.FakeLogger())
        self.assertEqual(0, self._sweep()['placed'])
        self.assertIn('No Nova cell named nowhere', logged.output)
        self.assertEqual((None, True), self._nova_api(uuid))
