"""The kinds of flow cellboot runs: a fixed registry, never a stored name.

A persisted flow says what it is with its meta's ``kind`` ('boot',
'reschedule', 'cross-cell'). Whoever rebuilds it — a conductor resuming
it or running its job, ``flows show`` putting its atoms in order — takes
the factory this registry holds for that kind. Nothing read from a
database or a jobboard is ever imported or called: those are written by
levels that the reader must not trust (every cell writes its own
database, where its reschedule flows are), and TaskFlow's
``flow_from_detail`` would import and call whatever callable a row names
(``meta.factory``), with the row's arguments.

A row that names anything else is corrupt (``corruption``): a meta that
is not a mapping, an unknown kind, a factory other than its kind's, a
factory with arguments. Corrupt flows are listed and shown as such, and
never run.

Rows written by earlier versions name their factory the way TaskFlow
saves it (``{'name': 'cellboot.workflows.boot.get_flow', 'args': [],
'kwargs': {}}``): those known names, without arguments, are read as
their kind (``LEGACY_FACTORIES``). New rows name no factory.

Each kind belongs to one level: boot flows to the super conductors (in
the flow database), reschedule flows to a cell's conductors (in that
cell's database). A conductor runs only flows of its own level's kinds,
from its own database.

Each kind's flow is built once in a process and shared by all its runs
(``flow``, ``cellboot.flowrun.shared``).

Adding a kind is one line in ``KINDS``.
"""

import collections

from cellboot import exception
from cellboot.flowrun import shared
from cellboot.workflows import boot
from cellboot.workflows import cross_cell
from cellboot.workflows import reschedule

# The kinds of flow: the values of a flow meta's ``kind``, the names of
# the jobboards' kinds (``board_keys``), defined here only.
KIND_BOOT = 'boot'
KIND_RESCHEDULE = 'reschedule'
KIND_CROSS_CELL = 'cross-cell'

# The levels flows run at.
SUPER = 'super'
CELL = 'cell'

_LEVEL_PLACES = {
    SUPER: 'the super conductors (the flow database)',
    CELL: 'a cell\'s conductors (that cell\'s database)',
}

Kind = collections.namedtuple('Kind', ['factory', 'level'])

# Every kind of flow, its factory and its level: the only flows that run.
KINDS = {
    KIND_BOOT: Kind(boot.get_flow, SUPER),
    KIND_RESCHEDULE: Kind(reschedule.get_flow, CELL),
    KIND_CROSS_CELL: Kind(cross_cell.get_flow, SUPER),
}

# The factory names that rows of earlier versions carry, and their kind.
# Never change or remove one: rows written with it are still read.
LEGACY_FACTORIES = {
    'cellboot.workflows.boot.get_flow': KIND_BOOT,
    'cellboot.workflows.reschedule.get_flow': KIND_RESCHEDULE,
}

# The fields TaskFlow saves for a factory.
_FACTORY_FIELDS = frozenset({'name', 'args', 'kwargs'})

# Longest stored value quoted in a reason (characters).
_QUOTED_WIDTH = 80


class CorruptFlow(exception.CellbootException):
    msg_fmt = ('Flow %(flow)s is corrupt and is never run: %(reason)s. '
               '`cellboot-manage flows show %(flow)s` shows what it holds')


def of_level(level):
    """The kinds of flow run at ``level``, sorted."""
    return tuple(sorted(name for name, kind in KINDS.items()
                        if kind.level == level))


def _quoted(value):
    """A stored value for a message: its repr, cut short."""
    text = repr(value)
    if len(text) > _QUOTED_WIDTH:
        text = text[:_QUOTED_WIDTH - 3] + '...'
    return text


def _factory_corruption(factory):
    """``(kind, None)`` of a legacy factory, or ``(None, reason)``."""
    if not isinstance(factory, dict):
        return None, f'its factory {_quoted(factory)} is not a mapping'
    extra = sorted(str(key) for key in set(factory) - _FACTORY_FIELDS)
    if extra:
        return None, f'its factory has unknown fields ({", ".join(extra)})'
    name = factory.get('name')
    if not isinstance(name, str) or name not in LEGACY_FACTORIES:
        return None, (f'it names factory {_quoted(name)}, which is none of '
                      f'cellboot\'s')
    if factory.get('args') or factory.get('kwargs'):
        return None, (f'its factory {name} is given arguments, which '
                      f'cellboot never stores')
    return LEGACY_FACTORIES[name], None


def corruption(meta, level=None):
    """Why a flow with this meta must never run; None when it may.

    ``level`` (``SUPER`` or ``CELL``): where the flow was found; a kind
    of another level is corrupt there.
    """
    if not isinstance(meta, dict):
        return 'its meta is not a mapping'
    kind = meta.get('kind')
    if kind is not None and (not isinstance(kind, str) or
                             kind not in KINDS):
        return _unknown_kind(kind)
    if 'factory' in meta:
        factory_kind, reason = _factory_corruption(meta['factory'])
        if reason is not None:
            return reason
        if kind is None:
            kind = factory_kind
        elif kind != factory_kind:
            return (f'its kind {kind} is not that of its factory '
                    f'({factory_kind})')
    if kind is None:
        return _unknown_kind(kind)
    if level is not None and KINDS[kind].level != level:
        return (f'a {kind} flow is run by {_LEVEL_PLACES[KINDS[kind].level]}'
                f' only, and this one was found elsewhere')
    return None


def _unknown_kind(kind):
    return (f'its kind {_quoted(kind)} is none that cellboot runs '
            f'({", ".join(sorted(KINDS))})')


def kind_of(flow_uuid, meta, level=None):
    """The kind of flow ``flow_uuid``; CorruptFlow if it must not run."""
    reason = corruption(meta, level)
    if reason is not None:
        raise CorruptFlow(flow=flow_uuid, reason=reason)
    return meta.get('kind') or LEGACY_FACTORIES[meta['factory']['name']]


def build(flow_detail, level):
    """The flow of a persisted flow detail, that of its kind (``flow``).

    Raises CorruptFlow, having imported and called nothing the detail
    names, when it is corrupt or not a flow of ``level``.
    """
    return flow(kind_of(flow_detail.uuid, flow_detail.meta, level))


def flow(kind):
    """The flow of ``kind`` (a kind cellboot itself writes), from the
    registry's factory: built once in this process, shared by every run
    and never to be changed (``cellboot.flowrun.shared``)."""
    return shared.flow_of(KINDS[kind].factory)
