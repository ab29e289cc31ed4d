"""A delete that fails part-way is finished by a retry or by the sweep.

Each step of a delete (``cellboot.builds.deletes``) is made to fail
once; the server must end deleted everywhere: no claims, no build
request, its mapping queued for delete, whatever failed.
"""

import time

import fixtures
from oslo_db import exception as db_exc

from cellboot.conductor import unfinished_deletes
from cellboot.objects import build_request
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_mapping
from tests import base
from tests.functional.api import fixtures as api_fixtures
from tests.functional import invariants


class _FailOnce:
    """Calls ``real`` except the first time, which raises ``error``."""

    def __init__(self, real, error):
        self.real = real
        self.error = error
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == 1:
            raise self.error
        return self.real(*args, **kwargs)


class DeleteStepsTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=1))
        self.cluster = self.api.cluster
        self.ctx = self.cluster.ctx
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        response = self.alice.boot()
        self.uuid = response.json()['server']['id']
        self.cluster.wait_for_quiet()
        self.assertNotEqual({}, self.cluster.allocations(self.uuid))

    def fail_once(self, obj, name, error):
        """``obj.name`` (a class's or an object's) raises once."""
        real = getattr(obj, name)
        if isinstance(obj, type):
            # An instance method: the patch receives ``self`` first.
            failing = _FailOnce(real, error)
            self.useFixture(fixtures.MockPatchObject(
                obj, name, autospec=True, side_effect=failing))
        else:
            failing = _FailOnce(real, error)
            self.useFixture(fixtures.MockPatchObject(
                obj, name, side_effect=failing))
        return failing

    def delete(self):
        return self.alice.delete(f'/servers/{self.uuid}')

    def show_once_the_cell_is_back(self, within=10):
        """GET the server; again while it answers 503, for ``within`` s.

        The API remembers a cell whose database failed as down, answers
        a show there 503 at once, and calls the cell in the background
        to find it back (``cellboot.db.cell.reachability``): the first
        shows after a failure may be 503s although the cell is fine.
        """
        deadline = time.monotonic() + within
        while True:
            response = self.alice.get(f'/servers/{self.uuid}')
            if response.status_code != 503 or time.monotonic() > deadline:
                return response
            time.sleep(0.05)

    def sweep(self):
        return unfinished_deletes.UnfinishedDeletes(
            self.cluster.super_conductor).sweep_once(self.ctx)

    def mapping(self):
        return instance_mapping.InstanceMapping.get_by_instance_uuid(
            self.ctx, self.uuid)

    def assertDeletedEverywhere(self):
        self.assertEqual(
            ('deleted', {}, True, 404),
            (self.cluster.find(self.uuid)[1].vm_state,
             self.cluster.allocations(self.uuid),
             self.mapping().queued_for_delete,
             self.alice.get(f'/servers/{self.uuid}').status_code))
        self.assertRaises(Exception,
                          build_request.BuildRequest.get_by_instance_uuid,
                          self.ctx, self.uuid)
        self.assertEqual([], invariants.check_invariants(self.ctx))

    def add_leftover_build_request(self):
        """The flow died between map-instance and delete-build-request."""
        build_request.BuildRequest.create(
            self.ctx, self.uuid, 'project-a', {'display_name': 'vm'},
            user_id='alice')

    # -- step 3: the claims --------------------------------------------

    def fail_release_once(self):
        return self.fail_once(self.cluster.scheduler, 'release_resources',
                              RuntimeError('scheduler down'))

    def test_a_failed_release_is_finished_by_a_retried_delete(self):
        self.fail_release_once()
        self.assertEqual(204, self.delete().status_code)
        self.assertNotEqual({}, self.cluster.allocations(self.uuid))
        self.assertEqual(204, self.delete().status_code)
        self.assertDeletedEverywhere()
        self.assertEqual(404, self.delete().status_code)

    def test_a_failed_release_is_finished_by_the_sweep(self):
        self.fail_release_once()
        self.assertEqual(204, self.delete().status_code)
        # Claims held in the cell for a server deleted there.
        self.assertEqual({'marked': 0, 'finished': 0, 'released': 1},
                         self.sweep())
        self.assertDeletedEverywhere()
        self.assertEqual({'marked': 0, 'finished': 0, 'released': 0},
                         self.sweep())

    # -- step 4: a build request left by the flow ----------------------

    def test_a_failed_build_request_removal_is_finished_by_a_retry(self):
        self.add_leftover_build_request()
        self.fail_once(build_request.BuildRequest, 'destroy_by_instance_uuid',
                       db_exc.DBConnectionError('API database down'))
        self.assertEqual(204, self.delete().status_code)
        self.assertEqual(204, self.delete().status_code)
        self.assertDeletedEverywhere()

    def test_a_failed_build_request_removal_is_finished_by_the_sweep(self):
        self.add_leftover_build_request()
        self.fail_once(build_request.BuildRequest, 'destroy_by_instance_uuid',
                       db_exc.DBConnectionError('API database down'))
        self.assertEqual(204, self.delete().status_code)
        self.assertEqual({'marked': 0, 'finished': 1, 'released': 0},
                         self.sweep())
        self.assertDeletedEverywhere()

    # -- step 2: the mark ----------------------------------------------

    def fail_mark_once(self):
        return self.fail_once(instance_mapping.InstanceMapping,
                              'set_queued_for_delete',
                              db_exc.DBConnectionError('API database down'))

    def test_a_failed_mark_answers_503_and_a_retry_finishes(self):
        self.fail_mark_once()
        response = self.delete()
        self.assertEqual(503, response.status_code)
        self.assertIn('delete it again',
                      response.json()['serviceUnavailable']['message'])
        self.assertEqual(204, self.delete().status_code)
        self.assertDeletedEverywhere()

    def test_a_failed_mark_is_finished_by_the_sweep(self):
        self.fail_mark_once()
        self.assertEqual(503, self.delete().status_code)
        self.assertEqual({'marked': 1, 'finished': 0, 'released': 1},
                         self.sweep())
        self.assertDeletedEverywhere()

    # -- step 1: the cell ----------------------------------------------

    def test_a_cell_that_fails_changes_nothing_and_a_retry_deletes(self):
        self.fail_once(instance_obj.Instance, 'destroy',
                       db_exc.DBConnectionError('cell database down'))
        response = self.delete()
        self.assertEqual(503, response.status_code)
        self.assertNotIn('cell1', response.text)
        self.assertEqual(
            (200, False),
            (self.show_once_the_cell_is_back().status_code,
             self.mapping().queued_for_delete))
        self.assertNotEqual({}, self.cluster.allocations(self.uuid))
        self.assertEqual(204, self.delete().status_code)
        self.assertDeletedEverywhere()
