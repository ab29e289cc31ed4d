"""What a flavor's extra specs may say, and what the catalog may hold.

Checked here, once, for ``POST /flavors``, ``/flavors/{id}/os-extra_specs``
and ``cellboot-manage flavor create --property`` alike, before anything
is written. Two keys are read by the scheduler and so must be right:

* ``resources:CLASS`` = a whole number of units (``"1"``): CLASS a
  resource class (``classes.check``) and, if custom, one an
  administrator created (``cellboot-manage resource_class create``);
* ``trait:NAME`` = ``required`` or ``forbidden``: NAME a trait, and if
  custom, a created one.

Any other key is kept as it is and means nothing to cellboot. A
problem raises ``exception.Invalid`` naming the key (400 over REST).
"""

from cellboot import exception
from cellboot.objects import flavor as flavor_obj
from cellboot.objects import resource_catalog
from cellboot.scheduler.resources import classes
from cellboot.scheduler.resources import traits

MAX_KEYS = 100
MAX_LENGTH = 255
TRAIT_VALUES = ('required', 'forbidden')
RESOURCES = resource_catalog.RESOURCES_PREFIX
TRAIT = resource_catalog.TRAIT_PREFIX


def _invalid(key, reason):
    return exception.Invalid(reason=f'extra spec {key[:80]!r}: {reason}')


def _text(key, value):
    """Strings without NUL: a key of 1 to 255 characters, a value of at
    most 255 (the widths of the columns)."""
    for what, text, shortest in (('key', key, 1), ('value', value, 0)):
        if not isinstance(text, str):
            raise _invalid(str(key), f'the {what} must be a string, not '
                                     f'{type(text).__name__}')
        if not shortest <= len(text) <= MAX_LENGTH:
            raise _invalid(key, f'the {what} must be {shortest} to '
                                f'{MAX_LENGTH} characters')
        if '\x00' in text:
            raise _invalid(key, f'the {what} holds a NUL character')


def _units(key, value):
    if not (value.isascii() and value.isdigit()
            and int(value) <= flavor_obj.MAX_INT):
        raise _invalid(key, f'the amount must be a whole number from 0 to '
                            f'{flavor_obj.MAX_INT} (as a string), not '
                            f'{value[:40]!r}')


def _named(key, check):
    try:
        return check(key.split(':', 1)[1])
    except exception.Invalid as exc:
        raise _invalid(key, exc.kwargs.get('reason', str(exc))) from exc


def check(context, specs):
    """``specs`` if every key and value may be stored; Invalid if not.

    Custom classes and traits are looked up in the catalog in one
    query each, after every other check passed.
    """
    if not isinstance(specs, dict):
        raise exception.Invalid(reason='extra_specs must be an object of '
                                       'strings')
    if len(specs) > MAX_KEYS:
        raise exception.Invalid(reason=f'a flavor has at most {MAX_KEYS} '
                                       f'extra specs, not {len(specs)}')
    custom = {resource_catalog.CLASSES: {}, resource_catalog.TRAITS: {}}
    for key, value in specs.items():
        _text(key, value)
        if key.startswith(RESOURCES):
            name = _named(key, classes.check)
            _units(key, value)
            if classes.is_custom(name):
                custom[resource_catalog.CLASSES][name] = key
        elif key.startswith(TRAIT):
            name = _named(key, traits.check)
            if value not in TRAIT_VALUES:
                raise _invalid(key, f'the value must be '
                                    f'{" or ".join(TRAIT_VALUES)}, not '
                                    f'{value[:40]!r}')
            if traits.is_custom(name):
                custom[resource_catalog.TRAITS][name] = key
    for catalog, keys in custom.items():
        missing = catalog.missing(context, keys)
        if missing:
            raise _invalid(keys[missing[0]],
                           f'custom {catalog.kind} {missing[0]} was not '
                           f'created (cellboot-manage '
                           f'{catalog.kind.replace(" ", "_")} create)')
    return specs


def custom_class(name):
    """``name`` if an administrator may create it as a resource class."""
    return _custom(name, classes, 'resource class')


def custom_trait(name):
    """``name`` if an administrator may create it as a trait."""
    return _custom(name, traits, 'trait')


def _custom(name, rules, kind):
    if isinstance(name, str) and rules.is_standard(name):
        raise exception.Invalid(
            reason=f'{name} is a standard {kind}: it exists already and '
                   f'cannot be created or deleted')
    if not rules.is_custom(name):
        shown = name if isinstance(name, str) else repr(name)
        raise exception.Invalid(
            reason=f'{shown[:80]} is not a custom {kind} name: use '
                   f'{rules.CUSTOM_PREFIX} followed by A-Z, 0-9 and _ (at '
                   f'most {rules.MAX_NAME} characters)')
    return name
