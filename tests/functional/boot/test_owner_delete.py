"""The owner deletes the server while its boot flow runs."""

from taskflow.listeners import base as listener_base
from taskflow import states

from cellboot.api import server_records
from cellboot.objects import build_request
from cellboot.objects import instance_mapping
from tests import base
from tests.functional import cluster
from tests.functional import invariants


class DeleteAfter(listener_base.Listener):
    """Deletes the request's servers, as the API would, after an atom."""

    def __init__(self, engine, atom, delete):
        super().__init__(engine, task_listen_for=[states.SUCCESS],
                         flow_listen_for=[], retry_listen_for=[])
        self.atom = atom
        self.delete = delete

    def _task_receiver(self, state, details):
        if details['task_name'] == self.atom:
            for uuid in self._engine.storage.fetch('instance_uuids'):
                self.delete(uuid)


class OwnerDeleteTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=2))
        self.ctx = self.cluster.ctx

    def _delete_after(self, atom, delete):
        self.cluster.super_conductor.runner.flow_listeners = [
            lambda engine: DeleteAfter(engine, atom, delete)]

    def _api_delete(self, uuid):
        """What ``DELETE /servers/{id}`` does."""
        server_records.delete(self.ctx, uuid, self.cluster.scheduler)

    def _assert_nothing_left(self, uuid):
        _cell, instance = self.cluster.find(uuid)
        self.assertEqual((True, {}), (bool(instance.deleted),
                                      self.cluster.allocations(uuid)))
        self.assertEqual([], instance_mapping.InstanceMapping.get_by_project(
            self.ctx, self.ctx.project_id))
        self.assertEqual([], build_request.BuildRequest.get_all(self.ctx))

    def test_delete_after_the_instance_was_created_leaves_nothing(self):
        # The mapping has no cell yet: the API removes the build request
        # and the mapping; the flow finds them gone.
        self._delete_after('create-in-cell', self._api_delete)
        uuids = self.cluster.boot(count=2)
        self.cluster.wait_for_quiet()
        for uuid in uuids:
            self._assert_nothing_left(uuid)
        self.assertEqual([], invariants.check_invariants(self.ctx))

    def test_a_deleted_server_is_never_cast_to_a_host(self):
        self._delete_after('map-instance', self._api_delete)
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        self.assertEqual([], [
            host for host in self.cluster.computes
            if self.cluster.handled(host)])
        (flow,) = self.cluster.flows(uuid)
        self.assertEqual('SUCCESS', flow['state'])
        self.assertEqual([], invariants.check_invariants(self.ctx))
