"""``abandoning.abandon``: a FAILURE or stuck boot flow given up on.

The deployments of ``test_flow_retry`` (in-process, SQLite and MariaDB,
no jobboard; a conductor "dies" between two atoms with a SIGKILLed
process's pid as owner). The abandon ends the flow FAILURE with its
note; the super conductors' next orphan sweep settles its servers (in
ERROR in their cell, or buried in cell0) with the abandon's fault, well
before ``[conductor] orphan_build_request_timeout``, and nothing leaks.
No conductor ever resumes the flow, and no second action is accepted.
"""

import datetime

import fixtures
from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot.conductor import orphans
from cellboot.conf import CONF
from cellboot import exception
from cellboot.flowrun import abandoning
from cellboot.flowrun import abandons
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import fencing
from cellboot.flowrun import lookup
from cellboot.flowrun import retrying
from cellboot.notifications import sender
from cellboot.objects import fault_messages
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional.boot import test_flow_retry
from tests.functional import invariants
from tests.functional.sweepers import base as sweep_base
from tests.functional.sweepers import test_orphan_build_requests

sigkilled_pid = test_flow_retry.sigkilled_pid


class _AbandonTests(test_flow_retry._Deployment):

    def setUp(self):
        super().setUp()
        # An hour: a settle that waited for it would never happen here.
        self.flags(orphan_build_request_timeout=3600, group='conductor')

    def sweep(self):
        """The super conductors' orphan sweep, build requests past the
        first timeout (a lost cast's) only."""
        test_orphan_build_requests._age(
            CONF.conductor.unstarted_build_request_timeout + 1)
        return orphans.OrphanBuildRequests(
            self.cluster.super_conductor).sweep_once(self.cluster.ctx)

    def settled(self, uuids):
        """``[(cell, vm_state, fault message, details, claims)]``."""
        found = []
        for uuid in uuids:
            cell, instance = self.cluster.find(uuid)
            fault = self.cluster.fault(uuid)
            found.append((cell.name, instance.vm_state, fault.message,
                          fault.details, self.cluster.allocations(uuid)))
        return found

    def assertSettled(self, flow_uuid, uuids, cell, reason=None):
        note = self.flow(flow_uuid)['abandoned']
        self.assertEqual(reason, note['reason'])
        message = abandons.fault_message(flow_uuid, note)
        if reason:
            self.assertTrue(message.endswith(f': {reason}'), message)
        self.assertEqual(
            [(cell, 'error', fault_messages.BUILD_ABANDONED, message,
              {})] * len(uuids), self.settled(uuids))
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    # -- the specification -------------------------------------------------

    def test_a_flow_left_by_a_sigkilled_conductor_is_settled_in_its_cell(
            self):
        flow_uuid, uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}', atom='create-in-cell')
        before = self.generation(flow_uuid)

        done = abandoning.abandon(self.cluster.ctx, flow_uuid, 'operator-1',
                                  reason='tenant asked to give up')

        self.assertEqual(('RUNNING', sorted(uuids)),
                         (done['from_state'], sorted(done['instance_uuids'])))
        flow = self.flow(flow_uuid)
        self.assertEqual('FAILURE', flow['state'])
        note = flow['meta']['abandoned']
        self.assertEqual(('operator-1', 'tenant asked to give up', 'RUNNING'),
                         (note['by'], note['reason'], note['from_state']))
        self.assertEqual(before + 1, self.generation(flow_uuid))
        self.assertEqual({'started': 0, 'settled': 2, 'handed_over': 0},
                         self.sweep())
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.sweep())
        self.assertSettled(flow_uuid, uuids, 'cell1',
                           reason='tenant asked to give up')

    def test_the_abandon_is_announced_once(self):
        self.flags(enabled=True, group='notifications')
        sent = []
        self.useFixture(fixtures.MockPatchObject(
            sender, 'send', lambda *args: sent.append(args)))
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}')
        del sent[:]
        abandoning.abandon(self.cluster.ctx, flow_uuid, 'operator-1',
                           reason='r1')
        ((_ctxt, _publisher, event_type, priority, payload),) = [
            args for args in sent if args[2].startswith('flow.')]
        data = payload['nova_object.data']
        reason = data['reason']['nova_object.data']['exception_message']
        self.assertEqual(('flow.abandon', 'WARN', flow_uuid, 'FAILURE'),
                         (event_type, priority, data['uuid'], data['state']))
        self.assertTrue(reason.startswith('An operator (operator-1) '
                                          'abandoned the flow'), reason)
        self.assertTrue(reason.endswith(': r1'), reason)

    def test_a_build_that_never_reached_a_cell_is_buried_in_cell0(self):
        flow_uuid, uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}', atom='schedule')
        abandoning.abandon(self.cluster.ctx, flow_uuid, 'operator-1')
        self.assertEqual(2, self.sweep()['settled'])
        self.assertSettled(flow_uuid, uuids, 'cell0')

    def test_a_failure_flow_is_abandoned_and_settled(self):
        flow_uuid, uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}')
        self.plant_failure(flow_uuid)
        done = abandoning.abandon(self.cluster.ctx, flow_uuid, 'operator-1')
        self.assertEqual('FAILURE', done['from_state'])
        self.assertEqual(2, self.sweep()['settled'])
        self.assertSettled(flow_uuid, uuids, 'cell1')

    def test_without_the_abandon_the_sweep_waits_for_the_timeout(self):
        # The contrast: an ordinary FAILURE flow's requests are left
        # alone until orphan_build_request_timeout.
        flow_uuid, uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}')
        self.plant_failure(flow_uuid)
        self.assertEqual(0, self.sweep()['settled'])
        self.assertEqual({'building'}, {self.cluster.find(uuid)[1].vm_state
                                        for uuid in uuids})

    def test_no_conductor_ever_resumes_an_abandoned_flow(self):
        flow_uuid, uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}', atom='map-instance')
        abandoning.abandon(self.cluster.ctx, flow_uuid, 'operator-1')
        # Its owner's pid is dead and it is old: an unfinished flow would
        # be handed over by the sweep and resumed by a starting conductor.
        sweep_base.update_flow_meta(self.cluster.flow_url, flow_uuid,
                                    owned_since=sweep_base.ago(7200))
        self.assertEqual(0, self.sweep()['handed_over'])
        self.assertEqual((0, []), self.restart(quiet=False))
        self.assertEqual('FAILURE', self.flow(flow_uuid)['state'])
        self.assertEqual([], invariants.check_invariants(self.cluster.ctx))

    def test_a_second_abandon_and_a_retry_are_refused_as_ended(self):
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}')
        abandoning.abandon(self.cluster.ctx, flow_uuid, 'operator-1')
        before = (self.flow(flow_uuid), self.generation(flow_uuid))
        exc = self.assertRaises(exception.FlowActionRefused,
                                abandoning.abandon, self.cluster.ctx,
                                flow_uuid, 'operator-2')
        self.assertIn('cannot be abandoned: it ended: operator-1 abandoned '
                      'it at', str(exc))
        self.assertEqual(409, exc.code)
        exc = self.assertRaises(exception.FlowActionRefused, retrying.retry,
                                self.cluster.ctx, flow_uuid, 'operator-2')
        self.assertIn('cannot be retried: it ended: operator-1 abandoned',
                      str(exc))
        self.assertEqual(before, (self.flow(flow_uuid),
                                  self.generation(flow_uuid)))

    # -- refusals (retry's checks) -----------------------------------------

    def test_a_flow_a_live_conductor_owns_is_refused_untouched(self):
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{self.live_pid()}')
        before = (self.flow(flow_uuid), self.generation(flow_uuid))
        exc = self.assertRaises(exception.FlowActionRefused,
                                abandoning.abandon, self.cluster.ctx,
                                flow_uuid, 'op')
        self.assertIn('cannot be abandoned: its conductor', str(exc))
        self.assertIn('is alive and runs it', str(exc))
        self.assertEqual(before, (self.flow(flow_uuid),
                                  self.generation(flow_uuid)))

    def test_another_hosts_flow_is_refused_without_a_jobboard(self):
        flow_uuid, _uuids = self.boot_and_kill('elsewhere:4242')
        exc = self.assertRaises(exception.FlowActionRefused,
                                abandoning.abandon, self.cluster.ctx,
                                flow_uuid, 'op')
        self.assertIn('owned by elsewhere:4242, on another host', str(exc))
        self.assertEqual('RUNNING', self.flow(flow_uuid)['state'])

    def test_a_flow_that_succeeded_is_refused(self):
        (uuid,) = self.cluster.boot(1)
        self.cluster.wait_for_quiet()
        (flow,) = self.cluster.flows(uuid)
        exc = self.assertRaises(exception.FlowActionRefused,
                                abandoning.abandon, self.cluster.ctx,
                                flow['uuid'], 'op')
        self.assertIn('it ended SUCCESS', str(exc))
        self.assertIsNone(self.flow(flow['uuid'])['abandoned'])

    def test_an_unknown_flow_is_not_found(self):
        self.assertRaises(exception.FlowNotFound, abandoning.abandon,
                          self.cluster.ctx,
                          '0b8f4d9e-5c1a-4e43-9d0f-7a2c6e1b3f55', 'op')

    def test_a_flow_whose_state_changed_meanwhile_is_refused(self):
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}')
        exc = self.assertRaises(
            exception.FlowActionRefused, abandoning.close,
            self.cluster.flow_url, flow_uuid, 'SUSPENDED', 'op', None)
        self.assertIn('its state changed meanwhile', str(exc))
        self.assertEqual('RUNNING', self.flow(flow_uuid)['state'])

    def test_a_corrupt_fence_is_refused_and_nothing_changes(self):
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}')
        engine = flow_db.get_backend(self.cluster.flow_url).engine
        with engine.begin() as conn:
            conn.execute(sa.update(fencing.FENCES).where(
                fencing.FENCES.c.flow_uuid == flow_uuid).values(
                generation=-3))
        before = self.flow(flow_uuid)
        exc = self.assertRaises(exception.FlowActionRefused,
                                abandoning.abandon, self.cluster.ctx,
                                flow_uuid, 'op')
        self.assertIn('has a corrupt fence', str(exc))
        self.assertEqual(before, self.flow(flow_uuid))

    def test_a_cross_cell_flow_is_refused(self):
        flow_uuid, _uuids = self.boot_and_kill(
            f'{CONF.host}:{sigkilled_pid()}')
        locate = lookup.locate_flow

        def as_cross_cell(*args, **kwargs):
            place, flow = locate(*args, **kwargs)
            return place, dict(flow, kind='cross-cell')

        self.useFixture(fixtures.MockPatchObject(lookup, 'locate_flow',
                                                 as_cross_cell))
        before = (self.flow(flow_uuid), self.generation(flow_uuid))
        exc = self.assertRaises(exception.FlowActionRefused,
                                abandoning.abandon, self.cluster.ctx,
                                flow_uuid, 'op')
        self.assertIn('it is a cross-cell flow', str(exc))
        self.assertEqual(before, (self.flow(flow_uuid),
                                  self.generation(flow_uuid)))

    def test_a_bad_reason_is_refused_before_anything_is_read(self):
        for reason in ('x' * 256, 'two\nlines', 'nul\x00', 'esc\x1b[2J',
                       'sep\u2028', 42, {'a': 1}):
            self.assertRaises(ValueError, abandoning.abandon,
                              self.cluster.ctx,
                              '0b8f4d9e-5c1a-4e43-9d0f-7a2c6e1b3f55', 'op',
                              reason=reason)


class SQLiteAbandonTest(_AbandonTests, base.TestCase):
    pass


class MySQLAbandonTest(_AbandonTests, base.TestCase):
    BACKEND = 'mysql'


class NoteTest(base.TestCase):
    """What is read back from a stored note: never trusted."""

    def test_a_note_that_is_not_a_dict_of_strings_reads_as_absent(self):
        for meta in (None, [], {}, {'abandoned': 'yes'},
                     {'abandoned': {'by': 'x'}},
                     {'abandoned': {'at': 7}},
                     {'abandoned': {'at': '2026\x1b[2J'}}):
            self.assertIsNone(abandons.read(meta), meta)
        self.assertEqual(
            {'by': None, 'at': '2026-01-01T00:00:00', 'reason': None,
             'from_state': 'RUNNING', 'settled_at': None},
            abandons.read({'abandoned': {
                'by': ['not', 'text'], 'at': '2026-01-01T00:00:00',
                'reason': 'clear\x1b[2Jthe screen',
                'from_state': 'RUNNING', 'extra': 1}}))

    def test_the_moment_is_naive_utc_or_none(self):
        self.assertEqual(datetime.datetime(2026, 1, 1, 11, 0),
                         abandons.moment({'at': '2026-01-01T12:00:00+01:00'}))
        self.assertIsNone(abandons.moment({'at': 'yesterday'}))
        note = abandons.new_note('op', None, None)
        self.assertEqual('PENDING', note['from_state'])
        self.assertLessEqual(abandons.moment(note), timeutils.utcnow())


class JobboardAbandonTest(test_flow_retry._Deployment, base.TestCase):
    """With a jobboard (real Redis): the board decides who runs a flow."""

    board = test_flow_retry.JobboardRetryTest.board

    def setUp(self):
        super().setUp()
        redis = self.useFixture(cb_fixtures.Redis())
        self.flags(backend='redis', url=redis.url, namespace=redis.namespace,
                   claim_expiry=5, group='jobboard')

    def test_another_hosts_stuck_flow_without_a_job_is_abandoned(self):
        # With a board, no host is needed to see that nobody runs it.
        flow_uuid, uuids = self.boot_and_kill('elsewhere:4242')
        done = abandoning.abandon(self.cluster.ctx, flow_uuid, 'op')
        self.assertEqual('RUNNING', done['from_state'])
        self.assertEqual((False, None),
                         jobboard_owners(self.board(), flow_uuid))
        self.flags(orphan_build_request_timeout=3600, group='conductor')
        self.restart(quiet=False)
        assert_settled_by_sweep(self, uuids)

    def test_a_flow_whose_job_a_conductor_holds_is_refused_untouched(self):
        flow_uuid, _uuids = self.boot_and_kill('elsewhere:4242')
        board = self.board()
        job = test_flow_retry.jobboard.post(board, 'boot', flow_uuid)
        board.claim(job, 'controller9:77')
        before = (self.flow(flow_uuid), self.generation(flow_uuid))
        exc = self.assertRaises(exception.FlowActionRefused,
                                abandoning.abandon, self.cluster.ctx,
                                flow_uuid, 'op')
        self.assertIn('cannot be abandoned: conductor controller9:77 holds '
                      'its job', str(exc))
        self.assertEqual(before, (self.flow(flow_uuid),
                                  self.generation(flow_uuid)))


def assert_settled_by_sweep(test, uuids):
    """The super conductors' sweep settles an abandoned boot flow's
    builds (``uuids``, none taken by a host) in ERROR, leaking nothing,
    without waiting for the orphan timeout: build requests past the lost
    cast's timeout only."""
    test_orphan_build_requests._age(
        CONF.conductor.unstarted_build_request_timeout + 1)
    test.assertEqual(len(uuids), orphans.OrphanBuildRequests(
        test.cluster.super_conductor).sweep_once(
            test.cluster.ctx)['settled'])
    test.assertEqual({'error'}, {test.cluster.find(uuid)[1].vm_state
                                 for uuid in uuids})
    test.assertEqual([], invariants.check_invariants(test.cluster.ctx))


def jobboard_owners(board, flow_uuid):
    return test_flow_retry.owners.board_holder(board, flow_uuid)
