"""Pages of a listing: the rows after a marker, in a fixed order.

Every list of the API is paged by *keyset*: a page is the first
``limit`` rows that sort after the last row of the previous page (the
marker), so a page costs one indexed query however deep in the list it
is, and rows added or removed meanwhile never make a page skip or repeat
one. The order must be total (its last column unique) and its columns
never NULL.
"""

import sqlalchemy as sa


def after(columns, values, descending=False):
    """A clause: rows that sort after ``values`` in ``columns``' order.

    ``columns`` sort ascending (all of them descending when
    ``descending``), in that order of precedence; ``values`` are the
    marker row's values of the same columns.
    """
    clauses = []
    for index, column in enumerate(columns):
        earlier = [earlier_column == value for earlier_column, value in
                   zip(columns[:index], values[:index])]
        later = (column < values[index] if descending
                 else column > values[index])
        clauses.append(sa.and_(*earlier, later))
    return sa.or_(*clauses)


def page(query, columns, marker_values, limit, descending=False):
    """``query`` from after the marker, ordered by ``columns``, ``limit``.

    ``marker_values`` None starts at the first row. Callers ask for one
    row more than they show, to know whether another page follows.
    ``descending`` walks the same order backwards (newest first, for a
    list ordered by id).
    """
    if marker_values is not None:
        query = query.where(after(columns, marker_values, descending))
    order = [column.desc() for column in columns] if descending else columns
    return query.order_by(*order).limit(limit)
