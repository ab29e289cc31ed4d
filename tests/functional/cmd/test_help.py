"""Every level of ``cellboot-manage`` explains itself and its exit codes."""

import argparse
import contextlib
import io

from cellboot.cmd import manage
from tests import base
from tests.functional.cmd import base as cmd_base


def command_paths(parser, prefix=()):
    """Every ``[group]`` and ``[group, command]`` the parser knows."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield prefix + (name,)
                yield from command_paths(sub, prefix + (name,))


def help_text(*path):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            manage.build_parser().parse_args([*path, '--help'])
        except SystemExit as exc:
            assert exc.code == 0, exc.code
    return out.getvalue()


class HelpTest(base.TestCase):

    def test_every_command_of_the_design_exists(self):
        paths = set(command_paths(manage.build_parser()))
        for path in [('db', 'sync'), ('db', 'version'),
                     ('cell_v2', 'map_cell0'), ('cell_v2', 'create_cell'),
                     ('cell_v2', 'list_cells'), ('cell_v2', 'delete_cell'),
                     ('cell_v2', 'discover_hosts'),
                     ('cell_v2', 'simple_cell_setup'),
                     ('cell_v2', 'verify_instance'),
                     ('flavor', 'create'), ('flavor', 'list'),
                     ('resource_class', 'list'), ('resource_class', 'create'),
                     ('resource_class', 'delete'), ('trait', 'list'),
                     ('trait', 'create'), ('trait', 'delete'),
                     ('provider', 'list'),
                     ('quota', 'show'), ('quota', 'update'),
                     ('db', 'purge'), ('flows', 'retry'),
                     ('flows', 'purge')]:
            self.assertIn(path, paths)

    def test_every_level_has_a_help_listing_its_exit_codes(self):
        for path in [()] + list(command_paths(manage.build_parser())):
            text = help_text(*path)
            self.assertIn('usage: cellboot-manage', text, path)
            self.assertIn('exit codes:', text, path)

    def test_flows_retry_help_lists_its_refusal_code(self):
        text = help_text('flows', 'retry')
        self.assertIn("3   refused: the flow's state or owner forbids it",
                      text)

    def test_delete_cell_help_lists_its_refusal_codes(self):
        text = help_text('cell_v2', 'delete_cell')
        for line in ('3   hosts are mapped', '4   instances are mapped'):
            self.assertIn(line, text)

    def test_create_cell_help_names_the_shared_transport_flag(self):
        for command in ('create_cell', 'simple_cell_setup'):
            text = ' '.join(help_text('cell_v2', command).split())
            self.assertIn('--allow-shared-transport', text, command)
            self.assertIn('not confined', text, command)
        text = ' '.join(help_text('cell_v2', 'create_cell').split())
        self.assertIn('2 a cell with that name, database or bus exists',
                      text)

    def test_help_of_the_installed_command_exits_0(self):
        result = cmd_base.run('cell_v2', 'verify_instance', '--help')
        self.assertEqual(0, result.code, result)
        self.assertIn('2   the instance is mapped but has no cell yet',
                      result.stdout)
        self.assertEqual('', result.stderr)
