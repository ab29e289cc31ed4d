"""The little that every domain object shares: fields, rows, dicts.

Objects are plain classes (no versionedobjects): a ``FIELDS`` tuple names
their attributes, they are built from the database row that the object
module's private reader/writer functions return, and ``to_dict()`` turns
them into plain values for RPC payloads, JSON responses and commands.
"""

import copy


class DomainObject:
    """A plain object whose attributes are the names in ``FIELDS``."""

    FIELDS = ()

    def __init__(self, **values):
        unknown = set(values) - set(self.FIELDS)
        if unknown:
            raise TypeError(f'{type(self).__name__} has no field(s) '
                            f'{", ".join(sorted(unknown))}')
        for name in self.FIELDS:
            setattr(self, name, values.get(name))

    @classmethod
    def from_row(cls, row, prefix='', **extra):
        """Build from a SQLAlchemy row whose keys are ``prefix`` + field.

        ``extra`` supplies or overrides the values that the row cannot
        carry as they are (nested objects, decoded JSON).
        """
        obj = cls()
        obj.load_row(row, prefix, **extra)
        return obj

    def load_row(self, row, prefix='', **extra):
        """Refresh the fields from a row, after an update wrote it."""
        values = row._mapping
        for name in self.FIELDS:
            if prefix + name in values:
                setattr(self, name, values[prefix + name])
        for name, value in extra.items():
            if name not in self.FIELDS:
                raise TypeError(f'{type(self).__name__} has no field {name}')
            setattr(self, name, value)

    def to_dict(self):
        """The fields as plain values; nested objects become dicts too."""
        return {name: _plain(getattr(self, name)) for name in self.FIELDS}

    def __repr__(self):
        ident = ', '.join(f'{name}={getattr(self, name)!r}'
                          for name in self.FIELDS[:3])
        return f'<{type(self).__name__} {ident}>'


def _plain(value):
    if isinstance(value, DomainObject):
        return value.to_dict()
    if isinstance(value, (dict, list)):
        # The caller may change the dict; the object must not change too.
        return copy.deepcopy(value)
    return value


def labelled_columns(table, prefix):
    """``table``'s columns labelled ``prefix`` + name, for joined rows."""
    return [column.label(prefix + column.name) for column in table.c]
