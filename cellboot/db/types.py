"""Column helpers shared by the API and cell models."""

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from oslo_utils import timeutils

# JSON documents that hold what a user sent (a server's metadata, a
# request's hints): MySQL's TEXT stops at 64 KiB, less than a request
# body may carry once escaped; MEDIUMTEXT holds 16 MiB. Other backends'
# text has no such limit.
LargeText = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql', 'mariadb')


def uuid_column(**kwargs):
    """A 36-character UUID string column (portable across backends)."""
    return sa.Column(sa.String(36), **kwargs)


def created_at():
    return sa.Column(sa.DateTime, default=timeutils.utcnow, nullable=True)


def updated_at():
    return sa.Column(sa.DateTime, onupdate=timeutils.utcnow, nullable=True)
