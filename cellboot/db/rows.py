"""Write a row and have it back in the same statement where possible.

The domain objects return the row they wrote, with what the database
filled in (its id, ``created_at``, ``updated_at``). Reading it back is a
second statement in the transaction, and in a multi-create every
statement counts: on SQLite each write transaction holds the whole
file's write lock, and the compute hosts' builds queue for it. SQLite
(3.35+) and PostgreSQL return the row from the INSERT or UPDATE itself
(``RETURNING``), MariaDB from an INSERT only; where the dialect cannot,
the row is read back as before.
"""

import sqlalchemy as sa


def _dialect(session):
    return session.get_bind().dialect


def insert(session, table, values):
    """Insert one row into ``table`` (its key column: ``id``); the row."""
    statement = sa.insert(table).values(**values)
    if _dialect(session).insert_returning:
        return session.execute(statement.returning(*table.c)).one()
    result = session.execute(statement)
    return session.execute(sa.select(table).where(
        table.c.id == result.inserted_primary_key[0])).one()


def insert_many(session, table, values_list):
    """Insert rows, not read back: one statement per set of columns.

    The DB-API's executemany; PyMySQL and SQLAlchemy's "insertmanyvalues"
    send the rows of one statement as a multi-row INSERT.
    """
    by_columns = {}
    for values in values_list:
        by_columns.setdefault(frozenset(values), []).append(values)
    for group in by_columns.values():
        session.execute(sa.insert(table), group)


def update(session, table, where, values, key):
    """Update the rows ``where`` matches; the rows as written.

    ``key`` selects the same rows after the update (``where`` may not:
    a conditional update changes what it tested), for the dialects
    that read them back.
    """
    statement = sa.update(table).where(where).values(**values)
    if _dialect(session).update_returning:
        return session.execute(statement.returning(*table.c)).all()
    if not session.execute(statement).rowcount:
        return []
    return session.execute(sa.select(table).where(key)).all()
