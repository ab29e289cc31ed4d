"""``cellboot-manage quota``: a project's limits, without the API.

The same limits as ``/os-quota-sets/{project}``: ``show`` prints each
resource's limit, where it comes from (the project's own, or the
``[quota]`` default) and what the project uses now; ``update`` sets some
of them; ``delete`` gives the project the defaults back. The limits of
resource classes for allocation requests (``--class DISK_GB=500``) are
shown when set, with what the project's allocation requests hold.
"""

from cellboot.console import output
from cellboot.console import parsing
from cellboot import exception
from cellboot import quota
from cellboot.scheduler import allocation_records
from cellboot.scheduler import allocations

_HEADERS = ['Resource', 'Limit', 'In use', 'Source']


def _limit_text(value):
    return 'unlimited' if value == quota.UNLIMITED else value


def _print(context, project_id):
    limits, overridden = quota.limits(context, project_id)
    used = quota.usage(context, project_id)
    held = allocation_records.usage(context, project_id)
    output.table(_HEADERS, [
        [resource, _limit_text(limits[resource]), used[resource],
         'project' if resource in overridden else 'default']
        for resource in quota.RESOURCES] + [
        [rc, _limit_text(limit), held.get(rc, 0), 'project']
        for rc, limit in sorted(quota.class_limits(
            context, project_id).items())])


def show(context, args):
    _print(context, quota.validate_project_id(args.project))
    return parsing.EXIT_OK


def _class_limits(texts):
    """``{class: limit}`` of ``--class CLASS=N`` options; Invalid for one
    not written so."""
    limits = {}
    for text in texts:
        rc, sep, value = text.partition('=')
        if not sep or not value.strip().lstrip('-').isdigit() \
                or len(value) > 12:
            raise exception.Invalid(
                reason=f'--class takes CLASS=N (N from -1 to '
                       f'{quota.MAX_LIMIT}), not {text[:80]!r}')
        limits[rc.strip()] = int(value)
    return limits


def update(context, args):
    values = {resource: getattr(args, resource)
              for resource in quota.RESOURCES
              if getattr(args, resource) is not None}
    values.update(_class_limits(args.classes or ()))
    quota.update(context, args.project, values,
                 check_classes=allocations.check_class_names)
    _print(context, args.project)
    return parsing.EXIT_OK


def delete(context, args):
    quota.reset(context, args.project)
    _print(context, args.project)
    return parsing.EXIT_OK


def register(groups):
    commands = parsing.add_group(
        groups, 'quota', "show and change a project's quota",
        'Show and change the limits of one project: instances, cores '
        '(VCPUs) and ram (MiB), counted over its servers that are not '
        'deleted. Projects without limits of their own have the [quota] '
        'defaults of the configuration file; -1 is unlimited.')
    command = parsing.add_command(
        commands, 'show', show, "print a project's limits and usage",
        'Print each limit of the project, whether it is the project\'s own '
        'or the default, and how much the project uses now.',
        exit_codes=((1, 'the project id is not valid'),))
    command.add_argument('project', metavar='PROJECT', help='a project id')
    command = parsing.add_command(
        commands, 'update', update, "set some of a project's limits",
        'Set the given limits of the project (the others keep their '
        'values), then print them all. A limit is a whole number from -1 '
        f'(unlimited) to {quota.MAX_LIMIT}; lowering one under what the '
        'project uses deletes nothing, it only refuses new servers.',
        exit_codes=((1, 'no limit given, a limit out of range, or the '
                        'project id is not valid'),))
    command.add_argument('project', metavar='PROJECT', help='a project id')
    command.add_argument('--instances', type=int, metavar='N',
                         help='servers the project may have')
    command.add_argument('--cores', type=int, metavar='N',
                         help='VCPUs, summed over its servers\' flavors')
    command.add_argument('--ram', type=int, metavar='MB',
                         help='memory in MiB, summed over its servers\' '
                              'flavors')
    command.add_argument('--class', dest='classes', action='append',
                         metavar='CLASS=N',
                         help='the limit of a resource class (standard or '
                              'created custom) summed over the project\'s '
                              'allocation requests; repeatable')
    command = parsing.add_command(
        commands, 'delete', delete, 'give a project the default limits',
        'Forget the limits set for the project: it has the [quota] '
        'defaults again. Prints the limits it has now.',
        exit_codes=((1, 'the project id is not valid'),))
    command.add_argument('project', metavar='PROJECT', help='a project id')
