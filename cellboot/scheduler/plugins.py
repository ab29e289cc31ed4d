"""Classes enabled by name in the configuration (filters, weighers).

A name is one of the built-in classes or a dotted path
(``package.module.ClassName``) to an out-of-tree subclass of the base
class: filters and weighers can be added without changing cellboot. A
wrong name stops the scheduler at start with the list of valid ones,
rather than scheduling without the filter the operator asked for.
"""

from oslo_utils import importutils

from cellboot import exception


def load(names, builtin, base_class, kind):
    """Instances of the classes ``names``, in order."""
    loaded = []
    for name in names:
        cls = builtin.get(name)
        if cls is None and '.' in name:
            try:
                cls = importutils.import_class(name)
            except (ImportError, ValueError, AttributeError) as exc:
                raise exception.ConfigurationError(
                    reason=f'cannot import {kind} {name}: {exc}')
        if not (isinstance(cls, type) and issubclass(cls, base_class)):
            raise exception.ConfigurationError(
                reason=f'unknown {kind} {name!r}; the built-in ones are '
                       f'{", ".join(builtin)}, or give the dotted path of '
                       f'a {base_class.__name__} subclass')
        loaded.append(cls())
    return loaded
