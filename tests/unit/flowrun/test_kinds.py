"""The registry of flow kinds: what a stored flow may say it is.

A flow detail's meta is data written by a level the reader must not
trust; these tests plant metas naming code (a module on the test's own
path that leaves a file behind when it is imported, and one when its
function is called) and check that the registry refuses them without
importing or calling anything.
"""

import os
import sys
import textwrap
import uuid

import fixtures
from taskflow.persistence import models

from cellboot.workflows import boot
from cellboot.flowrun import kinds
from cellboot.workflows import reschedule
from tests import base


def detail(meta):
    flow_detail = models.FlowDetail('planted', str(uuid.uuid4()))
    flow_detail.meta = meta
    return flow_detail


class RegistryTest(base.TestCase):

    def test_each_kind_builds_the_flow_of_its_name(self):
        for name in kinds.KINDS:
            flow = kinds.build(detail({'kind': name}),
                               kinds.KINDS[name].level)
            self.assertEqual(name, flow.name)

    def test_boot_is_the_super_conductors_and_reschedule_a_cells(self):
        # A cross-cell flow is the super conductors' too.
        self.assertEqual((('boot', 'cross-cell'), ('reschedule',)),
                         (kinds.of_level(kinds.SUPER),
                          kinds.of_level(kinds.CELL)))

    def test_rows_of_earlier_versions_are_read_as_their_kind(self):
        # What 1.x wrote: TaskFlow's factory details, beside the kind.
        for factory, kind, level in (
                (boot.get_flow, 'boot', kinds.SUPER),
                (reschedule.get_flow, 'reschedule', kinds.CELL)):
            name = f'{factory.__module__}.{factory.__name__}'
            meta = {'kind': kind,
                    'factory': {'name': name, 'args': [], 'kwargs': {}}}
            self.assertIsNone(kinds.corruption(meta, level))
            self.assertEqual(kind, kinds.build(detail(meta), level).name)
            # Without its kind, the known name says it.
            del meta['kind']
            self.assertEqual(kind, kinds.kind_of('f', meta, level))

    def test_the_legacy_names_are_those_of_the_factories_today(self):
        self.assertEqual(
            {name: name.split('.')[2] for name in kinds.LEGACY_FACTORIES},
            kinds.LEGACY_FACTORIES)


class PlantedMetaTest(base.TestCase):
    """Metas a compromised cell may write, refused as corrupt."""

    def setUp(self):
        super().setUp()
        directory = self.useFixture(fixtures.TempDir()).path
        self.module = f'cb_planted_{uuid.uuid4().hex}'
        self.imported = os.path.join(directory, 'imported')
        self.called = os.path.join(directory, 'called')
        with open(os.path.join(directory, f'{self.module}.py'), 'w') as f:
            f.write(textwrap.dedent(f'''\
                open({self.imported!r}, 'w').close()

                def get_flow(*args, **kwargs):
                    open({self.called!r}, 'w').close()
                '''))
        self.useFixture(fixtures.PythonPathEntry(directory))
        self.addCleanup(sys.modules.pop, self.module, None)

    def assertRefused(self, meta, *fragments, level=kinds.SUPER):
        flow_detail = detail(meta)
        error = self.assertRaises(kinds.CorruptFlow, kinds.build,
                                  flow_detail, level)
        for fragment in (flow_detail.uuid,) + fragments:
            self.assertIn(fragment, str(error))
        self.assertEqual(str(error).split(': ', 1)[1].split('. `')[0],
                         kinds.corruption(meta, level))
        self.assertEqual((False, False, False),
                         (os.path.exists(self.imported),
                          os.path.exists(self.called),
                          self.module in sys.modules))

    def test_a_factory_that_is_not_cellboots_is_never_imported(self):
        self.assertRefused(
            {'kind': 'boot', 'factory': {'name': f'{self.module}.get_flow',
                                         'args': [], 'kwargs': {}}},
            f"names factory '{self.module}.get_flow', which is none of "
            f"cellboot's")

    def test_os_system_with_arguments_is_refused(self):
        self.assertRefused(
            {'kind': 'boot', 'factory': {'name': 'os.system',
                                         'args': [f'touch {self.called}'],
                                         'kwargs': {}}},
            "names factory 'os.system'")

    def test_an_unknown_kind_is_refused_whatever_its_factory(self):
        self.assertRefused(
            {'kind': 'exfiltrate', 'factory': {
                'name': f'{self.module}.get_flow', 'args': [],
                'kwargs': {}}},
            "its kind 'exfiltrate' is none that cellboot runs (boot, "
            "cross-cell, reschedule)")

    def test_a_meta_without_kind_or_factory_is_refused(self):
        self.assertRefused({'instance_uuids': []}, 'its kind None is none')

    def test_cellboots_own_factory_with_arguments_is_refused(self):
        self.assertRefused(
            {'kind': 'boot', 'factory': {
                'name': 'cellboot.workflows.boot.get_flow',
                'args': [self.called], 'kwargs': {}}},
            'is given arguments')
        self.assertRefused(
            {'kind': 'boot', 'factory': {
                'name': 'cellboot.workflows.boot.get_flow',
                'kwargs': {'path': self.called}}},
            'is given arguments')

    def test_a_kind_and_a_factory_that_disagree_are_refused(self):
        self.assertRefused(
            {'kind': 'boot', 'factory': {
                'name': 'cellboot.workflows.reschedule.get_flow'}},
            'its kind boot is not that of its factory (reschedule)')

    def test_factory_fields_taskflow_never_writes_are_refused(self):
        self.assertRefused(
            {'kind': 'boot', 'factory': {
                'name': 'cellboot.workflows.boot.get_flow',
                'module': self.module}},
            'unknown fields (module)')

    def test_values_of_the_wrong_type_are_refused(self):
        self.assertRefused(['kind', 'boot'], 'its meta is not a mapping')
        self.assertRefused({'kind': ['boot']}, "its kind ['boot'] is none")
        self.assertRefused({'kind': 'boot', 'factory': 'os.system'},
                           "its factory 'os.system' is not a mapping")
        self.assertRefused({'kind': 'boot', 'factory': {'name': None}},
                           'names factory None')

    def test_a_flow_of_another_level_is_refused(self):
        self.assertRefused({'kind': 'boot'},
                           'a boot flow is run by the super conductors',
                           level=kinds.CELL)
        self.assertRefused({'kind': 'reschedule'},
                           "a reschedule flow is run by a cell's conductors",
                           level=kinds.SUPER)

    def test_a_long_stored_value_is_cut_short_in_the_reason(self):
        reason = kinds.corruption({'kind': 'x' * 10000})
        self.assertLess(len(reason), 200)
        self.assertIn("'xxx", reason)
