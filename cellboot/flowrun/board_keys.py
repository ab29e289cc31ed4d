"""Where the conductors' Redis keys are: boards, sweep locks, cell prefixes.

Every key starts with ``[jobboard] namespace`` (NAMESPACE below):

* the super conductors' keys: the boot board ``NAMESPACE.boot`` (TaskFlow
  names its keys ``NAMESPACE.boot:listings``, ``:sequence``, ``:trash``,
  ``:JOB.owned`` and ``:JOB.last_modified``) and their sweep lock
  ``NAMESPACE.sweeper.boot``;
* cell C's keys, all under ``NAMESPACE.cell.C.`` (``cell_prefix``): the
  board of its reschedule flows ``NAMESPACE.cell.C.reschedule`` and its
  conductors' sweep lock ``NAMESPACE.cell.C.sweeper``.

So that a cell's conductors can be given Redis credentials that reach
their cell's keys and nothing else (a Redis 6+ ACL user with the key
pattern ``acl_key_pattern(C)``), C is the cell's name with every
character but ASCII letters, digits, ``-`` and ``_`` written ``%XX``
(its UTF-8 bytes): no cell's prefix begins another's (the ``.`` after
the name ends it), none holds a character that an ACL pattern reads as a
wildcard, and neither super conductor key starts with
``NAMESPACE.cell.``. docs/reliability.md says how to set such users up.
"""

import string

from cellboot.conf import CONF
from cellboot.flowrun import kinds

_NAME_CHARACTERS = frozenset(string.ascii_letters + string.digits + '-_')

# Characters a Redis glob pattern reads as more than themselves.
_GLOB_SPECIAL = frozenset('*?[]\\^')


def cell_key_name(cell_name):
    """``cell_name`` as it appears in its keys (see the module doc)."""
    return ''.join(
        char if char in _NAME_CHARACTERS
        else ''.join(f'%{byte:02X}' for byte in char.encode('utf-8'))
        for char in cell_name)


def cell_prefix(cell_name):
    """The beginning of every Redis key of cell ``cell_name``."""
    return f'{CONF.jobboard.namespace}.cell.{cell_key_name(cell_name)}.'


def board_name(kind, cell_name=None):
    """The board of ``kind``: a super conductors' kind's
    (``NAMESPACE.boot``, ``NAMESPACE.cross-cell``), or a cell's
    reschedules."""
    if kind == kinds.KIND_RESCHEDULE:
        return f'{cell_prefix(cell_name)}{kinds.KIND_RESCHEDULE}'
    if kind == kinds.KIND_CROSS_CELL:
        return f'{CONF.jobboard.namespace}.{kinds.KIND_CROSS_CELL}'
    return f'{CONF.jobboard.namespace}.{kinds.KIND_BOOT}'


def sweep_lock_name(cell_name=None):
    """The key of the sweep lock of the super conductors, or of a cell's."""
    if cell_name is None:
        return f'{CONF.jobboard.namespace}.sweeper.{kinds.KIND_BOOT}'
    return f'{cell_prefix(cell_name)}sweeper'


def acl_key_pattern(cell_name):
    """The Redis ACL key pattern of cell ``cell_name``'s keys, all of them.

    ``ACL SETUSER USER ... ~PATTERN``: the cell's prefix, its wildcard
    characters (from the namespace) escaped, then ``*``.
    """
    escaped = ''.join(f'\\{char}' if char in _GLOB_SPECIAL else char
                      for char in cell_prefix(cell_name))
    return f'{escaped}*'
