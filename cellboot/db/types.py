"""Column helpers shared by the API and cell models."""

import sqlalchemy as sa
from oslo_utils import timeutils


def uuid_column(**kwargs):
    """A 36-character UUID string column (portable across backends)."""
    return sa.Column(sa.String(36), **kwargs)


def created_at():
    return sa.Column(sa.DateTime, default=timeutils.utcnow, nullable=True)


def updated_at():
    return sa.Column(sa.DateTime, onupdate=timeutils.utcnow, nullable=True)
