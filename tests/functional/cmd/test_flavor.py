"""``cellboot-manage flavor create | list``."""

import os
import subprocess

from cellboot.objects import flavor as flavor_obj
from tests import base as test_base
from tests.functional.cmd import base


def table_rows(stdout):
    """The data rows of a printed table, as lists of stripped cells."""
    lines = [line for line in stdout.splitlines() if line.startswith('|')]
    return [[cell.strip() for cell in line.split('|')[1:-1]]
            for line in lines[1:]]


class _FlavorTests:

    def test_create_stores_the_flavor_and_prints_it(self):
        result = self.manage('flavor', 'create', 'm1.small', '--vcpus', '2',
                             '--ram', '2048', '--disk', '20', '--id', 'm1s',
                             '--description', 'small')
        self.assertSucceeded(result)
        flavor = flavor_obj.Flavor.get_by_name(self.context, 'm1.small')
        self.assertEqual(('m1s', 2, 2048, 20, True, 'small'),
                         (flavor.flavorid, flavor.vcpus, flavor.memory_mb,
                          flavor.root_gb, flavor.is_public,
                          flavor.description))
        self.assertEqual([['m1s', 'm1.small', '2', '2048', '20', 'True',
                           'False', 'small', '']], table_rows(result.stdout))

    def test_create_private_flavor(self):
        self.manage('flavor', 'create', 'hidden', '--vcpus', '1', '--ram',
                    '512', '--disk', '0', '--private')
        self.assertFalse(flavor_obj.Flavor.get_by_name(
            self.context, 'hidden').is_public)

    def test_create_without_id_gives_the_flavor_a_uuid(self):
        self.manage('flavor', 'create', 'tiny', '--vcpus', '1', '--ram',
                    '512', '--disk', '1')
        flavor = flavor_obj.Flavor.get_by_name(self.context, 'tiny')
        self.assertEqual(36, len(flavor.flavorid))

    def test_create_a_taken_name_exits_2_and_writes_nothing(self):
        flavor_obj.Flavor.create(self.context, 'm1.small', 1, 512)
        before = self.api_snapshot()
        result = self.manage('flavor', 'create', 'm1.small', '--vcpus', '2',
                             '--ram', '2048', '--disk', '20')
        self.assertOneLineError(result, 2, 'm1.small')
        self.assertEqual(before, self.api_snapshot())

    def test_create_with_zero_vcpus_exits_1_and_writes_nothing(self):
        before = self.api_snapshot()
        result = self.manage('flavor', 'create', 'none', '--vcpus', '0',
                             '--ram', '512', '--disk', '1')
        self.assertOneLineError(result, 1, 'vcpus')
        self.assertEqual(before, self.api_snapshot())

    def test_properties_are_checked_and_stored_as_extra_specs(self):
        self.assertSucceeded(self.manage('resource_class', 'create',
                                         'CUSTOM_FPGA'))
        self.assertSucceeded(self.manage('trait', 'create', 'CUSTOM_SSD'))
        result = self.manage(
            'flavor', 'create', 'fpga', '--vcpus', '1', '--ram', '512',
            '--disk', '0', '--property', 'resources:CUSTOM_FPGA=1',
            '--property', 'trait:CUSTOM_SSD=required',
            '--property', 'hw:note=a=b')
        self.assertSucceeded(result)
        specs = {'resources:CUSTOM_FPGA': '1', 'trait:CUSTOM_SSD': 'required',
                 'hw:note': 'a=b'}
        self.assertEqual(specs, flavor_obj.Flavor.get_by_name(
            self.context, 'fpga').extra_specs)
        self.assertEqual(', '.join(f'{key}={value}' for key, value in
                                   sorted(specs.items())),
                         table_rows(result.stdout)[0][-1])

    def test_bad_properties_exit_1_and_write_nothing(self):
        before = self.api_snapshot()
        for prop, fragment in (('resources:CUSTOM_NOPE=1', 'CUSTOM_NOPE'),
                               ('resources:VCPU=-1', 'resources:VCPU'),
                               ('trait:HW_CPU_X86_AVX2=maybe', 'required'),
                               ('trait:bad=required', 'trait:bad'),
                               ('novalue', 'KEY=VALUE'),
                               ('=v', 'KEY=VALUE'),
                               ('k=' + 'v' * 256, '255')):
            result = self.manage('flavor', 'create', 'bad', '--vcpus', '1',
                                 '--ram', '512', '--disk', '0',
                                 '--property', prop)
            self.assertOneLineError(result, 1, fragment)
        result = self.manage('flavor', 'create', 'bad', '--vcpus', '1',
                             '--ram', '512', '--disk', '0',
                             '--property', 'k=1', '--property', 'k=2')
        self.assertOneLineError(result, 1, 'twice')
        self.assertEqual(before, self.api_snapshot())

    def test_list_shows_every_flavor_by_name(self):
        flavor_obj.Flavor.create(self.context, 'm1.large', 4, 8192,
                                 root_gb=80, flavorid='3')
        flavor_obj.Flavor.create(self.context, 'm1.tiny', 1, 512,
                                 flavorid='1')
        result = self.manage('flavor', 'list')
        self.assertSucceeded(result)
        self.assertEqual([['3', 'm1.large', '4', '8192', '80'],
                          ['1', 'm1.tiny', '1', '512', '0']],
                         [row[:5] for row in table_rows(result.stdout)])

    def test_a_reader_that_goes_away_is_no_error(self):
        # `cellboot-manage flavor list | head -0`: the pipe is closed
        # before the table is written.
        flavor_obj.Flavor.create(self.context, 'm1.tiny', 1, 512,
                                 flavorid='1')
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            process = subprocess.run(
                base.command_line('--config-file', self.config_file,
                                  'flavor', 'list'),
                stdout=write_end, stderr=subprocess.PIPE, text=True,
                timeout=base.COMMAND_TIMEOUT)
        finally:
            os.close(write_end)
        self.assertEqual('', process.stderr)
        self.assertEqual(0, process.returncode)


class SQLiteFlavorTest(_FlavorTests, test_base.SQLiteMixin,
                       base.ManageTestCase):
    pass


class MySQLFlavorTest(_FlavorTests, test_base.MySQLMixin,
                      base.ManageTestCase):
    pass
