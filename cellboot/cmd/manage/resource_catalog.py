"""``cellboot-manage resource_class`` and ``trait``: the custom names.

Standard resource classes and traits (os-resource-classes, os-traits)
exist without being created; a ``CUSTOM_*`` name must be created here
(or over REST) before a flavor's extra spec may name it, so that a typo
in a flavor is refused rather than never scheduled. The storing and the
refusals are ``cellboot.objects.resource_catalog``'s, the name rules
``cellboot.api.extra_specs``' (the same for REST and here).
"""

from cellboot.api import extra_specs
from cellboot.console import output
from cellboot.console import parsing
from cellboot import exception
from cellboot.objects import resource_catalog
from cellboot.scheduler.resources import classes
from cellboot.scheduler.resources import traits

EXIT_EXISTS = 2
EXIT_IN_USE = 3


class _Group:
    """The three commands of one kind of name."""

    def __init__(self, group, plural, catalog, rules, custom, standard):
        self.group = group
        self.plural = plural
        self.catalog = catalog
        self.rules = rules
        self.custom = custom
        self.standard = standard

    def list_names(self, context, args):
        rows = [] if args.custom_only else [
            [name, 'standard'] for name in self.standard()]
        rows += [[name, 'custom'] for name in self.catalog.names(context)]
        output.table(['Name', 'Kind'], sorted(rows))
        return parsing.EXIT_OK

    def create(self, context, args):
        name = self.custom(args.name)
        try:
            self.catalog.create(context, name)
        except exception.CatalogNameExists as exc:
            output.error(str(exc))
            return EXIT_EXISTS
        output.say(f'Created {self.catalog.kind} {name}')
        return parsing.EXIT_OK

    def delete(self, context, args):
        if self.rules.is_standard(args.name):
            raise exception.Invalid(
                reason=f'{args.name} is a standard {self.catalog.kind}: it '
                       f'cannot be deleted')
        try:
            self.catalog.destroy(context, args.name)
        except exception.CatalogNameInUse as exc:
            output.error(str(exc))
            return EXIT_IN_USE
        output.say(f'Deleted {self.catalog.kind} {args.name}')
        return parsing.EXIT_OK

    def register(self, groups):
        kind = self.catalog.kind
        commands = parsing.add_group(
            groups, self.group, f'list, create and delete custom '
                                f'{self.plural}',
            f'Manage the {kind} names flavors may use: the standard ones '
            f'exist already; custom ones ({self.rules.CUSTOM_PREFIX} then '
            f'A-Z, 0-9 and _) are created here before a flavor names them.')
        command = parsing.add_command(
            commands, 'list', self.list_names, f'list the {kind} names',
            f'List the standard {kind} names and the custom ones created, '
            f'by name.')
        command.add_argument('--custom-only', action='store_true',
                             help='list the custom names only')
        command = parsing.add_command(
            commands, 'create', self.create, f'create a custom {kind}',
            f'Create a custom {kind}, so that flavors may name it.',
            exit_codes=((1, 'the name is standard or not a custom name'),
                        (EXIT_EXISTS, 'it was created already')))
        command.add_argument('name', metavar='NAME',
                             help=f'{self.rules.CUSTOM_PREFIX}...')
        command = parsing.add_command(
            commands, 'delete', self.delete, f'delete a custom {kind}',
            f'Delete a custom {kind}. Refused while a flavor\'s extra spec '
            f'or a shared pool uses it.',
            exit_codes=((1, 'no such custom name, or a standard one'),
                        (EXIT_IN_USE, 'a flavor or a pool uses it')))
        command.add_argument('name', metavar='NAME',
                             help=f'{self.rules.CUSTOM_PREFIX}...')


_CLASSES = _Group('resource_class', 'resource classes',
                  resource_catalog.CLASSES, classes, extra_specs.custom_class,
                  lambda: classes.STANDARD)
_TRAITS = _Group('trait', 'traits', resource_catalog.TRAITS, traits,
                 extra_specs.custom_trait, lambda: sorted(traits.standard()))


def register(groups):
    _CLASSES.register(groups)
    _TRAITS.register(groups)
