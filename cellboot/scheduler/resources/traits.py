"""Which traits exist: those of ``os-traits``, and ``CUSTOM_*``.

A trait is a qualitative property of a provider (``HW_CPU_X86_AVX2``,
``STORAGE_DISK_SSD``, ``CUSTOM_RACK_7``): a request requires or forbids
it, it is never consumed. The standard names come from ``os-traits``,
the list OpenStack services share; custom ones follow the same rule as
custom resource classes (``CUSTOM_`` then A-Z, 0-9 and _).

As with resource classes (``classes``), a cell accepts any well-formed
trait its hosts report, and the API checks that a custom trait named
by a flavor or a request was created by an administrator.
"""

import functools

import os_traits

from cellboot import exception
from cellboot.scheduler.resources import classes

CUSTOM_PREFIX = os_traits.CUSTOM_NAMESPACE
MAX_NAME = classes.MAX_NAME
# One rule for custom names, traits and classes alike.
is_custom = classes.is_custom


@functools.lru_cache(maxsize=1)
def standard():
    """Every standard trait, as a frozenset (os-traits walks its modules
    to list them: read once)."""
    return frozenset(os_traits.get_traits())


def is_standard(name):
    return name in standard()


def is_valid(name):
    return isinstance(name, str) and (is_standard(name) or is_custom(name))


def check(name):
    """Return ``name`` if it is a trait, else raise Invalid."""
    if is_valid(name):
        return name
    shown = name if isinstance(name, str) else repr(name)
    raise exception.Invalid(
        reason=f'{shown[:80]} is not a trait: use a standard trait of '
               f'os-traits (such as HW_CPU_X86_AVX2, STORAGE_DISK_SSD) '
               f'or {CUSTOM_PREFIX} followed by A-Z, 0-9 and _ '
               f'(at most {MAX_NAME} characters)')
