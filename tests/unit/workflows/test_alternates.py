"""The reschedule flow's atoms: ``alternates``, ``claim-alternate``,
``cast-to-compute``."""

from oslo_utils import uuidutils
from taskflow import retry
from taskflow.types import failure

from cellboot.builds import fates
from cellboot import exception
from cellboot.flowrun import fencing
from cellboot.objects import fault_messages
from cellboot.objects import instance as instance_obj
from cellboot.workflows.tasks import alternates
from tests import base
from tests.unit.workflows import fleet

RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 10}


def _history(*tries):
    """A retry history: one (provided, {atom: failure}) per try."""
    return retry.History([
        (provided, {'claim-alternate': failure.Failure.from_exception(exc)})
        for provided, exc in tries])


class _AlternatesTests:
    """An instance of cell1 whose build failed on h1; h2 and h3 left."""

    def setUp(self):
        super().setUp()
        self.nodes = {name: self.add_host(name, vcpus=2)
                      for name in ('h1', 'h2', 'h3')}
        self.cell = self.cells[0]
        self.uuid = uuidutils.generate_uuid()
        with self.target(self.cell) as cctxt:
            self.instance = instance_obj.Instance.create(
                cctxt, self.uuid, 'p1', instance_obj.vm_states.BUILDING,
                user_id='alice', host='h1', node='h1',
                flavor=dict(fleet.SMALL)).to_dict()
        self.host_list = [self._selection('h2'), self._selection('h3')]
        self.build_retry = {'num_attempts': 1, 'hosts': [['h1', 'h1']],
                            'last_failure': 'spawn failed on h1'}

    def _selection(self, host):
        return {'service_host': host, 'nodename': host,
                'compute_node_uuid': self.nodes[host],
                'cell_uuid': self.cell.uuid,
                'allocation_request': dict(RESOURCES), 'claimed': False}

    def _claim(self, alternate):
        return alternates.ClaimAlternate('claim-alternate').execute(
            self.ctx, self.cell_scheduler, self.cell, self.instance, alternate,
            self.build_retry, self.host_list, {'flavor': {'vcpus': 1}})

    def test_alternates_provides_the_next_untried_alternate(self):
        controller = alternates.Alternates('alternates')
        tried = _history((self.host_list[0], RuntimeError('no')))
        self.assertEqual(self.host_list[1], controller.execute(
            tried, self.host_list, self.build_retry, max_attempts=3))

    def test_alternates_stops_at_max_attempts(self):
        controller = alternates.Alternates('alternates')
        tried = _history((self.host_list[0], RuntimeError('no')))
        self.assertIsNone(controller.execute(
            tried, self.host_list, self.build_retry, max_attempts=2))

    def test_alternates_retries_while_alternates_are_left(self):
        controller = alternates.Alternates('alternates')
        tried = _history((self.host_list[0], RuntimeError('no')))
        self.assertEqual(retry.RETRY, controller.on_failure(
            tried, self.host_list, self.build_retry, max_attempts=3))

    def test_alternates_reverts_once_all_were_tried(self):
        controller = alternates.Alternates('alternates')
        tried = _history(*[(alt, RuntimeError('no'))
                           for alt in self.host_list])
        self.assertEqual(retry.REVERT, controller.on_failure(
            tried, self.host_list, self.build_retry, max_attempts=3))

    def test_exhausted_alternates_put_the_instance_in_error(self):
        tried = _history((self.host_list[0], exception.ClaimFailed(
            amount=1, resource_class='VCPU', uuid=self.nodes['h2'],
            consumer=self.uuid, reason='h2 is full')))
        alternates.Alternates('alternates').revert(
            tried, self.ctx, self.cell_scheduler, self.cell, self.instance,
            self.build_retry)
        fault = self.fault_of(self.cell, self.uuid)
        # The owner's sentence; the last failure is for admins.
        self.assertEqual(fault_messages.RETRIES_EXCEEDED, fault.message)
        self.assertTrue(fault.details.startswith(
            'Exceeded maximum number of retries.'), fault.details)
        self.assertIn('h2 is full', fault.details)
        self.assertEqual('error',
                         self.instance_in(self.cell, self.uuid).vm_state)

    def test_exhaustion_without_a_try_names_the_hosts_failure(self):
        alternates.Alternates('alternates').revert(
            _history(), self.ctx, self.cell_scheduler, self.cell,
            self.instance, self.build_retry)
        self.assertIn('last failure: spawn failed on h1',
                      self.fault_of(self.cell, self.uuid).details)

    def test_exhaustion_releases_claims_and_records_the_event(self):
        self.cell_scheduler.claim_resources(
            self.ctx, self.uuid, self.nodes['h3'], RESOURCES)
        alternates.Alternates('alternates').revert(
            _history(), self.ctx, self.cell_scheduler, self.cell,
            self.instance, self.build_retry)
        self.assertEqual({}, self.held(self.uuid))
        event = self.events_in(self.cell, self.uuid)[-1]
        self.assertEqual((fates.RESCHEDULE_EVENT, 'Error'),
                         (event.event, event.result))

    def test_claim_alternate_claims_and_moves_the_instance(self):
        self.assertTrue(self._claim(self.host_list[0]))
        self.assertEqual({self.nodes['h2']: RESOURCES}, self.held(self.uuid))
        instance = self.instance_in(self.cell, self.uuid)
        self.assertEqual(('h2', 'h2'), (instance.host, instance.node))

    def test_claim_alternate_stores_what_the_cast_will_carry(self):
        # For a cell conductor to send the build again if it is lost.
        self._claim(self.host_list[0])
        instance = self.instance_in(self.cell, self.uuid)
        self.assertEqual(
            {'host_list': [self.host_list[1]],
             'request_spec': {'flavor': {'vcpus': 1}},
             'retry': self.build_retry},
            instance.build_args)
        self.assertEqual(0, instance.build_recasts)

    def test_claim_alternate_moves_under_its_runs_fence(self):
        flow = fleet.FlowFence(self.cell)
        self.assertTrue(alternates.ClaimAlternate('claim-alternate').execute(
            self.ctx, self.cell_scheduler, self.cell, self.instance,
            self.host_list[0], self.build_retry, self.host_list,
            {'flavor': {'vcpus': 1}}, fence=flow.fence))
        self.assertEqual('h2', self.instance_in(self.cell, self.uuid).host)

    def test_claim_alternate_taken_over_mid_step_moves_nothing(self):
        # The stale run stalls after its claim; another run takes the
        # flow (in the cell's database, like the instance) meanwhile.
        # The move holds the fence in its own transaction: refused.
        flow = fleet.FlowFence(self.cell)
        stalling = fleet.Stalling(self.cell_scheduler, 'claim_resources',
                                  flow.take_over)
        self.assertRaises(
            fencing.FencedOut,
            alternates.ClaimAlternate('claim-alternate').execute,
            self.ctx, stalling, self.cell, self.instance, self.host_list[0],
            self.build_retry, self.host_list, {'flavor': {'vcpus': 1}},
            fence=flow.fence)
        instance = self.instance_in(self.cell, self.uuid)
        self.assertEqual(('h1', 'h1', None),
                         (instance.host, instance.node, instance.build_args))
        # Its claim stays for the new run, which replays this try on
        # the same alternate (a consumer's claim on a host is made once).
        self.assertEqual({self.nodes['h2']: RESOURCES}, self.held(self.uuid))

    def test_cast_alternate_taken_over_casts_nothing(self):
        flow = fleet.FlowFence(self.cell)
        self._claim(self.host_list[0])
        flow.take_over()
        self.assertRaises(
            fencing.FencedOut,
            alternates.CastAlternate('cast-to-compute').execute,
            self.ctx, self.compute, self.cell, self.instance,
            self.host_list[0], True, self.host_list,
            {'flavor': {'vcpus': 1}}, self.build_retry, fence=flow.fence)
        self.assertEqual([], self.compute.casts)

    def test_claim_alternate_leaves_a_build_a_host_took(self):
        # h1 took the build after all (a late cast): it keeps it, and
        # the alternate's claim is given back.
        with self.target(self.cell) as cctxt:
            instance_obj.Instance(uuid=self.uuid).claim_build(cctxt, 'h1')
        self.assertFalse(self._claim(self.host_list[0]))
        instance = self.instance_in(self.cell, self.uuid)
        self.assertEqual(('h1', 'spawning'),
                         (instance.host, instance.task_state))
        self.assertEqual({}, self.held(self.uuid))

    def test_claim_alternate_fails_when_the_alternate_is_full(self):
        for _ in range(2):
            self.cell_scheduler.claim_resources(
                self.ctx, uuidutils.generate_uuid(), self.nodes['h2'],
                RESOURCES)
        self.assertRaises(exception.ClaimFailed, self._claim,
                          self.host_list[0])
        self.assertEqual('h1', self.instance_in(self.cell, self.uuid).host)

    def test_claim_alternate_gives_back_the_claim_of_a_deleted_one(self):
        with self.target(self.cell) as cctxt:
            instance_obj.Instance.get_by_uuid(cctxt, self.uuid).destroy(
                cctxt)
        self.assertFalse(self._claim(self.host_list[0]))
        self.assertEqual({}, self.held(self.uuid))

    def test_claim_alternate_without_an_alternate_exceeds_retries(self):
        self.assertRaises(exception.MaxRetriesExceeded, self._claim, None)

    def test_claim_alternate_revert_releases_the_claim(self):
        self._claim(self.host_list[0])
        alternates.ClaimAlternate('claim-alternate').revert(
            self.ctx, self.cell_scheduler, self.instance, self.host_list[0],
            result=True)
        self.assertEqual({}, self.held(self.uuid))

    def test_cast_sends_the_alternates_after_this_one(self):
        self._claim(self.host_list[0])
        cast = alternates.CastAlternate('cast-to-compute').execute(
            self.ctx, self.compute, self.cell, self.instance,
            self.host_list[0], True, self.host_list, {'flavor': {}},
            self.build_retry)
        self.assertEqual(fates.OK, cast)
        sent = self.compute.casts[0]
        self.assertEqual(('h2', [self.host_list[1]], self.build_retry),
                         (sent['host'], sent['host_list'], sent['retry']))

    def test_cast_sends_nothing_for_an_instance_not_claimed(self):
        cast = alternates.CastAlternate('cast-to-compute').execute(
            self.ctx, self.compute, self.cell, self.instance,
            self.host_list[0], False, self.host_list, {'flavor': {}},
            self.build_retry)
        self.assertEqual((fates.DELETED, []), (cast, self.compute.casts))


class SQLiteAlternatesTest(_AlternatesTests, base.SQLiteMixin,
                           fleet.FleetTestCase):
    pass


class MySQLAlternatesTest(_AlternatesTests, base.MySQLMixin,
                          fleet.FleetTestCase):
    pass


class PostgreSQLAlternatesTest(_AlternatesTests, base.PostgreSQLMixin,
                               fleet.FleetTestCase):
    pass
