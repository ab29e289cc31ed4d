"""``cellboot-manage provider trait show|add|remove|set``, and the
worked example of docs/manage.md run as written."""

import os
import shlex

from oslo_utils import uuidutils

from cellboot.scheduler.resources import provider_traits
from cellboot.scheduler.resources import providers
from tests import base as test_base
from tests.functional.cmd import base


class _ProviderTraitTests:

    def setUp(self):
        super().setUp()
        self.map_cell1()
        self.uuid = uuidutils.generate_uuid()
        providers.update_provider(self.context, self.uuid, 'host1', {
            'VCPU': {'total': 8, 'max_unit': 8}})
        self.assertSucceeded(self.manage('trait', 'create', 'CUSTOM_SSD'))

    def traits(self):
        return provider_traits.get_traits(self.context).get(self.uuid, [])

    def test_add_remove_set_by_name_or_uuid(self):
        result = self.manage('provider', 'trait', 'add', 'host1',
                             'CUSTOM_SSD', 'HW_CPU_X86_AVX2')
        self.assertSucceeded(result)
        self.assertIn('CUSTOM_SSD, HW_CPU_X86_AVX2', result.stdout)
        self.assertEqual(['CUSTOM_SSD', 'HW_CPU_X86_AVX2'], self.traits())
        self.assertSucceeded(self.manage('provider', 'trait', 'remove',
                                         self.uuid, 'CUSTOM_SSD',
                                         'HW_CPU_X86_SSE'))
        self.assertEqual(['HW_CPU_X86_AVX2'], self.traits())
        self.assertSucceeded(self.manage('provider', 'trait', 'set', 'host1',
                                         'CUSTOM_SSD'))
        self.assertEqual(['CUSTOM_SSD'], self.traits())
        result = self.manage('provider', 'trait', 'show', 'host1')
        self.assertSucceeded(result)
        self.assertIn('CUSTOM_SSD', result.stdout)
        self.assertIn('cell1', result.stdout)
        self.assertSucceeded(self.manage('provider', 'trait', 'set',
                                         'host1'))
        self.assertEqual([], self.traits())

    def test_bad_input_exits_1_and_changes_nothing(self):
        self.assertSucceeded(self.manage('provider', 'trait', 'set', 'host1',
                                         'CUSTOM_SSD'))
        for args, fragment in (
                (['add', 'host1', 'CUSTOM_NEVER_CREATED'],
                 'CUSTOM_NEVER_CREATED'),
                (['add', 'host1', 'ssd'], 'ssd'),
                (['set', 'host1', 'HW_NO_SUCH_TRAIT'], 'HW_NO_SUCH_TRAIT'),
                (['add', 'nohost', 'CUSTOM_SSD'], 'nohost'),
                (['show', uuidutils.generate_uuid()], 'could not be found'),
                (['add', 'host1', 'CUSTOM_' + 'X' * 300], 'CUSTOM_')):
            self.assertOneLineError(self.manage('provider', 'trait', *args),
                                    1, fragment)
        self.assertEqual(2, self.manage('provider', 'trait', 'add',
                                        'host1').code)
        self.assertEqual(2, self.manage('provider', 'trait', 'flip', 'host1',
                                        'CUSTOM_SSD').code)
        self.assertEqual(['CUSTOM_SSD'], self.traits())


DOC = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'docs',
                   'manage.md')
EXAMPLE = '### Giving hosts FPGAs, GPUs and traits: a worked example'
CONFIG = '--config-file "$CB/cellboot.conf"'


def documented_commands():
    """The argument lists of the example's ``cellboot-manage`` lines."""
    with open(DOC, encoding='utf-8') as doc:
        text = doc.read().split(EXAMPLE, 1)[1]
    block = text.split('```sh\n', 1)[1].split('```', 1)[0]
    block = block.replace('\\\n', ' ')
    return [shlex.split(line.replace(CONFIG, ''))[1:]
            for line in block.splitlines() if line.strip()]


class _DocumentedExampleTests:

    def test_the_worked_example_runs_as_documented(self):
        self.map_cell1()
        uuid = uuidutils.generate_uuid()
        # What the host reports with [compute] extra_inventories =
        # CUSTOM_FPGA:2 and no [compute] traits.
        providers.update_provider(self.context, uuid, 'cell1-host1', {
            'VCPU': {'total': 8, 'max_unit': 8},
            'CUSTOM_FPGA': {'total': 2, 'max_unit': 2}})
        commands = documented_commands()
        self.assertEqual(5, len(commands), commands)
        for args in commands:
            result = self.manage(*args)
            self.assertSucceeded(result)
        self.assertIn('CUSTOM_FPGA 0/2', result.stdout)
        self.assertIn('CUSTOM_SSD, HW_CPU_X86_AVX2', result.stdout)
        self.assertEqual(['CUSTOM_SSD', 'HW_CPU_X86_AVX2'],
                         provider_traits.get_traits(self.context)[uuid])


class SQLiteDocumentedExampleTest(_DocumentedExampleTests,
                                  test_base.SQLiteMixin,
                                  base.ManageTestCase):
    pass


class SQLiteProviderTraitTest(_ProviderTraitTests, test_base.SQLiteMixin,
                              base.ManageTestCase):
    pass


class PostgreSQLProviderTraitTest(_ProviderTraitTests,
                                  test_base.PostgreSQLMixin,
                                  base.ManageTestCase):
    pass
