"""The metrics' own machinery: sources read at scrape, listener, casts.

Each test reads the process's registry (``prometheus_client.REGISTRY``)
before and after, under labels of its own, so that what other objects
of the process count does not matter.
"""

import gc
from unittest import mock

import oslo_messaging
import prometheus_client
from taskflow import engines
from taskflow.patterns import linear_flow
from taskflow import task

from cellboot.flowrun import kinds
from cellboot.flowrun import metrics_listener
from cellboot.flowrun import runner as runner_mod
from cellboot.metrics import sources
from cellboot.rpc import client as rpc_client
from tests import base


def sample(name, **labels):
    return prometheus_client.REGISTRY.get_sample_value(name, labels) or 0.0


class _Source:

    def __init__(self, *samples, fail=False):
        self.figures = list(samples)
        self.fail = fail

    def samples(self):
        if self.fail:
            raise RuntimeError('cannot say')
        return self.figures


class SourcesTest(base.TestCase):

    def test_values_of_one_key_are_added(self):
        one = _Source(('cellboot_flows_running', {'kind': 'unit-a'}, 2))
        two = _Source(('cellboot_flows_running', {'kind': 'unit-a'}, 3))
        for source in (one, two):
            sources.register(source)
        self.assertEqual(5, sample('cellboot_flows_running', kind='unit-a'))

    def test_a_cell_is_usable_only_if_every_scheduler_says_so(self):
        one = _Source(('cellboot_cell_usable', {'cell': 'unit-cell'}, 1))
        two = _Source(('cellboot_cell_usable', {'cell': 'unit-cell'}, 0))
        for source in (one, two):
            sources.register(source)
        self.assertEqual(0, sample('cellboot_cell_usable', cell='unit-cell'))

    def test_a_source_that_fails_costs_only_its_own_figures(self):
        good = _Source(('cellboot_flows_running', {'kind': 'unit-b'}, 1))
        bad = _Source(fail=True)
        for source in (bad, good):
            sources.register(source)
        self.assertEqual(1, sample('cellboot_flows_running', kind='unit-b'))

    def test_a_dropped_source_is_no_longer_reported(self):
        source = _Source(('cellboot_flows_running', {'kind': 'unit-c'}, 7))
        sources.register(source)
        self.assertEqual(7, sample('cellboot_flows_running', kind='unit-c'))
        del source
        gc.collect()
        self.assertIsNone(prometheus_client.REGISTRY.get_sample_value(
            'cellboot_flows_running', {'kind': 'unit-c'}))


class _Ok(task.Task):
    def execute(self):
        return 1


class _Boom(task.Task):
    def execute(self):
        raise RuntimeError('boom')


class MetricsListenerTest(base.TestCase):

    def test_atoms_and_the_flow_outcome_are_observed(self):
        flow = linear_flow.Flow('unit-kind').add(_Ok('first'),
                                                 _Boom('second'))
        engine = engines.load(flow)
        count = 'cellboot_flow_atom_duration_seconds_count'
        before = {(atom, state): sample(count, kind='unit-kind', atom=atom,
                                        state=state)
                  for atom in ('first', 'second')
                  for state in ('success', 'failure', 'reverted')}
        ended = sample('cellboot_flows_ended_total', kind='unit-kind',
                       state='reverted')
        with metrics_listener.MetricsListener(engine):
            self.assertRaises(RuntimeError, engine.run)
        after = {key: sample(count, kind='unit-kind', atom=key[0],
                             state=key[1]) for key in before}
        self.assertEqual({('first', 'success'): 1, ('first', 'reverted'): 1,
                          ('second', 'failure'): 1,
                          ('second', 'reverted'): 1},
                         {key: after[key] - before[key] for key in after
                          if after[key] != before[key]})
        self.assertEqual(ended + 1, sample('cellboot_flows_ended_total',
                                           kind='unit-kind',
                                           state='reverted'))


class CastFailureTest(base.TestCase):

    def test_a_cast_the_broker_did_not_take_is_counted(self):
        client = rpc_client.RPCClient.__new__(rpc_client.RPCClient)
        prepared = mock.Mock()
        prepared.cast.side_effect = oslo_messaging.MessageDeliveryFailure(
            'no broker')
        before = sample('cellboot_rpc_cast_failures_total',
                        method='unit_method')
        with mock.patch.object(client, '_prepare', return_value=prepared):
            self.assertRaises(oslo_messaging.MessageDeliveryFailure,
                              client.cast, {}, 'unit_method', reconnects=1)
        self.assertEqual(before + 1, sample(
            'cellboot_rpc_cast_failures_total', method='unit_method'))


class RunnerFiguresTest(base.TestCase):

    def test_a_flow_handed_over_is_counted_and_in_hand_until_it_ends(self):
        runner = runner_mod.Runner(kinds.KIND_RESCHEDULE, kinds.CELL,
                                   lambda: 'sqlite://', lambda ctx: {})
        before = sample('cellboot_flows_handed_over_total',
                        kind=kinds.KIND_RESCHEDULE)
        # No such flow in that (empty) database: the resumption thread
        # logs it and forgets it.
        self.assertTrue(runner.hand_over('no-such-flow'))
        self.assertEqual(before + 1, sample(
            'cellboot_flows_handed_over_total', kind=kinds.KIND_RESCHEDULE))
        runner.close()
        self.assertEqual([('cellboot_flows_running',
                           {'kind': kinds.KIND_RESCHEDULE}, 0)],
                         list(runner.samples()))
