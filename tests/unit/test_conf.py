"""The configuration package registers, lists and documents every option.

``cellboot/conf/`` has one module per option group; ``cellboot.conf``
registers them all on the global ``cfg.CONF`` and ``cellboot.conf.opts``
lists them for ``oslo-config-generator``. These tests keep the three views
in step, so that an option cannot be used without being in the sample
configuration, nor be in the sample without help text.
"""

from importlib import metadata
import pkgutil

from oslo_config import cfg

from cellboot import conf as cellboot_conf
from cellboot.conf import opts as conf_opts
from tests import base

# Modules of cellboot/conf/ that are machinery, not option groups.
NOT_GROUP_MODULES = frozenset({'opts'})


def _group_name(group):
    return group.name if isinstance(group, cfg.OptGroup) else group


def _listed_options():
    """{(group name, option dest)} as listed for the sample generator."""
    return {(_group_name(group), opt.dest)
            for group, opts in conf_opts.list_opts() for opt in opts}


def _parsed_conf(*modules):
    """A private ConfigOpts with the given modules' options, parsed."""
    conf = cfg.ConfigOpts()
    for module in modules:
        module.register_opts(conf)
    conf([], project='cellboot', default_config_files=[])
    return conf


def _registered_options(conf):
    """{(group name, option dest)} of every option registered on conf."""
    found = set()
    for key in conf:
        value = conf[key]
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            found.update((key, dest) for dest in value)
        else:
            found.add(('DEFAULT', key))
    return found


class ConfModulesTest(base.TestCase):

    def test_every_group_module_is_in_modules(self):
        found = {info.name for info in
                 pkgutil.iter_modules(cellboot_conf.__path__)}
        registered = {module.__name__.rsplit('.', 1)[1]
                      for module in cellboot_conf.MODULES}
        self.assertEqual(found - NOT_GROUP_MODULES, registered)

    def test_every_module_has_register_opts_and_list_opts(self):
        for module in cellboot_conf.MODULES:
            self.assertTrue(callable(getattr(module, 'register_opts', None)),
                            module.__name__)
            self.assertTrue(callable(getattr(module, 'list_opts', None)),
                            module.__name__)

    def test_every_listed_option_is_registered_on_global_conf(self):
        registered = _registered_options(cellboot_conf.CONF)
        self.assertEqual(set(), _listed_options() - registered)

    def test_list_opts_covers_every_registered_option(self):
        # oslo.config's own command line options (--config-file, ...)
        # are not ours to list.
        builtin = _registered_options(_parsed_conf())
        registered = _registered_options(
            _parsed_conf(*cellboot_conf.MODULES))
        self.assertEqual(registered - builtin, _listed_options())

    def test_no_option_is_listed_twice_in_a_group(self):
        seen = set()
        for group, opts in conf_opts.list_opts():
            for opt in opts:
                key = (_group_name(group), opt.dest)
                self.assertNotIn(key, seen)
                seen.add(key)

    def test_every_option_has_help_text(self):
        missing = sorted(
            f'[{_group_name(group)}] {opt.name}'
            for group, opts in conf_opts.list_opts() for opt in opts
            if not (opt.help or '').strip())
        self.assertEqual([], missing)

    def test_every_named_group_has_help_text(self):
        missing = sorted(
            group.name for group, _opts in conf_opts.list_opts()
            if isinstance(group, cfg.OptGroup)
            and not (group.help or '').strip())
        self.assertEqual([], missing)

    def test_oslo_config_entry_point_is_list_opts(self):
        (entry_point,) = metadata.entry_points(
            group='oslo.config.opts', name='cellboot')
        self.assertIs(conf_opts.list_opts, entry_point.load())


class DatabaseBlipDefaultsTest(base.TestCase):
    """Both database groups wait out a blip at start, retrying each second."""

    def test_api_and_cell_databases_share_the_reconnect_defaults(self):
        from cellboot.conf import CONF
        from cellboot.conf import database
        for group in (CONF.database, CONF.api_database):
            for name, value in database.RECONNECT_DEFAULTS.items():
                self.assertEqual(value, group[name], name)
