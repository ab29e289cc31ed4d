"""Which resource classes exist: the standard ones, and ``CUSTOM_*``.

The standard classes are those of ``os-resource-classes``, the list
every OpenStack service agrees on (VCPU, MEMORY_MB, DISK_GB, VGPU,
FPGA, IPV4_ADDRESS, ...); keeping our own list would drift from it.
A deployment adds its own as ``CUSTOM_`` followed by upper-case
letters, digits and underscores, as Placement does.

Two questions, answered at two places:

* *Is this name a resource class at all?* (``check``) -- asked wherever
  a name arrives from outside: a compute host's report, a flavor's
  extra spec, an allocation request. A cell's scheduler accepts any
  well-formed custom class from its own hosts: it never asks the API
  level, and a cell that reports a strange class can only make its own
  hosts attract the requests that name it.
* *Has an administrator created this custom class?* -- asked by the API
  before a flavor or an allocation names it (``cellboot.api`` keeps the
  catalog of created classes in the API database), so that a typo in a
  flavor is a 400, not a build that never finds a host.
"""

import re

import os_resource_classes

from cellboot import exception

STANDARD = tuple(os_resource_classes.STANDARDS)
_STANDARD = frozenset(STANDARD)
CUSTOM_PREFIX = os_resource_classes.CUSTOM_NAMESPACE
# The column that holds a class is 255 characters wide.
MAX_NAME = 255
_CUSTOM = re.compile(r'CUSTOM_[A-Z0-9_]+\Z')


def is_standard(name):
    return name in _STANDARD


def is_custom(name):
    """Whether ``name`` is a well-formed custom class name."""
    return (isinstance(name, str) and len(name) <= MAX_NAME
            and _CUSTOM.match(name) is not None)


def is_valid(name):
    return is_standard(name) or is_custom(name)


def check(name):
    """Return ``name`` if it is a resource class, else raise Invalid.

    The message says what a valid name looks like, since the caller is
    usually an operator who wrote the name by hand.
    """
    if isinstance(name, str) and is_valid(name):
        return name
    shown = name if isinstance(name, str) else repr(name)
    raise exception.Invalid(
        reason=f'{shown[:80]} is not a resource class: use a standard '
               f'class (such as VCPU, MEMORY_MB, DISK_GB, VGPU) or '
               f'{CUSTOM_PREFIX} followed by A-Z, 0-9 and _ '
               f'(at most {MAX_NAME} characters)')
