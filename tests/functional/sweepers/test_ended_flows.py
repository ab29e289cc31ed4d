"""The orphan sweep settles build requests that outlived their boot flow.

A boot flow that ended FAILURE (a revert that failed) leaves its build
requests; SUCCESS or REVERTED should not, but if one did, the server
would show as building for ever just the same. The tests end a flow by
writing its state, as the failed run would have left it, then sweep.
"""

import datetime

from oslo_utils import timeutils
import sqlalchemy as sa
from taskflow.persistence.backends.sqlalchemy import tables as tf_tables

from cellboot.conductor import ended_flows
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot.flowrun import backend as flow_db
from cellboot import exception
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import fault_messages
from cellboot.objects import instance as instance_obj
from cellboot.objects import instance_mapping
from cellboot.flowrun import records
from tests.functional import invariants
from tests.functional.sweepers import test_orphan_build_requests as orphans

HOST = 'cell1-host1'


def _end_flow(flow_uuid, state):
    """The flow detail as a run that ended ``state`` leaves it."""
    flows = tf_tables.fetch(sa.MetaData()).flowdetails
    backend = flow_db.get_backend(CONF.flow_persistence.connection)
    with backend.engine.begin() as conn:
        conn.execute(sa.update(flows).where(flows.c.uuid == flow_uuid).values(
            state=state))


class EndedFlowTest(orphans._ClusterTest):

    def ended_request(self, state, count=1):
        """A request whose flow ended ``state``, both older than the
        timeout; its instance uuids."""
        uuids = self.orphan(count=count)
        orphans._age()
        flow_uuid = orphans._create_flow(self.manager, *self.payload,
                                         owner='gone:1')
        _end_flow(flow_uuid, state)
        self.flow_uuid = flow_uuid
        return uuids

    def violations(self):
        """The invariants' findings, but the ended flow's own state."""
        return [line for line in invariants.check_invariants(self.ctx)
                if self.flow_uuid not in line]

    def build_requests_left(self, uuids):
        found = []
        for uuid in uuids:
            try:
                build_request_obj.BuildRequest.get_by_instance_uuid(
                    self.ctx, uuid)
            except exception.BuildRequestNotFound:
                continue
            found.append(uuid)
        return found

    def test_a_failed_flows_instances_without_a_cell_are_buried_once(self):
        uuids = self.ended_request('FAILURE', count=2)
        self.assertEqual({'started': 0, 'settled': 2, 'handed_over': 0},
                         self.check.sweep_once(self.ctx))
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.check.sweep_once(self.ctx))
        self.assertEqual(
            ([('cell0', 'error', fault_messages.BUILD_NOT_FINISHED,
               ended_flows.fault_message(self.flow_uuid, 'FAILURE'))] * 2,
             [], []),
            ([(self.cluster.find(uuid)[0].name,
               self.cluster.find(uuid)[1].vm_state,
               self.cluster.fault(uuid).message,
               self.cluster.fault(uuid).details) for uuid in uuids],
             self.build_requests_left(uuids), self.violations()))

    def test_a_failed_flows_untaken_builds_in_a_cell_end_error_there(self):
        # The first is mapped to its cell and was cast (untaken); the
        # flow of the second died before map-instance (still scheduling,
        # as create-in-cell leaves it).
        uuids = self.ended_request('FAILURE', count=2)
        cell = self.cluster.cells[0]
        long_ago = timeutils.utcnow() - datetime.timedelta(
            seconds=orphans.TIMEOUT + 1)
        instances = cell_models.Instance.__table__
        task_states = (None, instance_obj.task_states.SCHEDULING)
        for uuid, task_state in zip(uuids, task_states):
            with cb_context.target_cell(self.ctx, cell) as cctxt:
                instance_obj.Instance.create(
                    cctxt, uuid, 'project-a',
                    instance_obj.vm_states.BUILDING, user_id='alice',
                    host=HOST, node=HOST, task_state=task_state)
            with cell_connection.get_engine(
                    cell.database_connection).begin() as conn:
                conn.execute(sa.update(instances).where(
                    instances.c.uuid == uuid).values(
                        created_at=long_ago, updated_at=long_ago))
            self.cluster.cell_schedulers[cell.name].claim_resources(
                self.ctx, uuid, self.cluster.computes[HOST].node.uuid,
                {'VCPU': 1})
        instance_mapping.InstanceMapping.get_by_instance_uuid(
            self.ctx, uuids[0]).set_cell(self.ctx, cell.uuid)
        self.assertEqual({'started': 0, 'settled': 2, 'handed_over': 0},
                         self.check.sweep_once(self.ctx))
        message = ended_flows.fault_message(self.flow_uuid, 'FAILURE')
        self.assertEqual(
            ([('cell1', 'error', fault_messages.BUILD_NOT_FINISHED, message,
               {})] * 2, [], []),
            ([(self.cluster.find(uuid)[0].name,
               self.cluster.find(uuid)[1].vm_state,
               self.cluster.fault(uuid).message,
               self.cluster.fault(uuid).details,
               self.cluster.allocations(uuid)) for uuid in uuids],
             self.build_requests_left(uuids), self.violations()))

    def test_a_build_request_left_by_a_successful_flow_goes(self):
        (uuid,) = self.cluster.boot()
        self.cluster.wait_for_quiet()
        _cell, instance = self.cluster.find(uuid)
        build_request_obj.BuildRequest.create(
            self.ctx, uuid, 'project-a',
            {'reservation_id': instance.reservation_id}, user_id='alice')
        orphans._age()
        self.flow_uuid = records.flow_uuid('boot', instance.reservation_id)
        self.assertEqual({'started': 0, 'settled': 1, 'handed_over': 0},
                         self.check.sweep_once(self.ctx))
        self.assertEqual(('active', [], []),
                         (self.cluster.find(uuid)[1].vm_state,
                          self.build_requests_left([uuid]),
                          invariants.check_invariants(self.ctx)))
