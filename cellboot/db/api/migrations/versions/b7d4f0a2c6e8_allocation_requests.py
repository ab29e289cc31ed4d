"""Requests that are not servers.

Revision ID: b7d4f0a2c6e8
Revises: a5c3e9f1d2b4
Create Date: 2026-12-07 01:40:00.000000

``allocation_requests``: what ``/os-allocations`` placed for a project
(a volume's storage, a public address), the provider that holds it (a
shared pool, or a host and its cell), and whether its claim is known to
hold (``status``). Empty at first.

Frozen history: the table is described here, not imported.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = 'b7d4f0a2c6e8'
down_revision = 'a5c3e9f1d2b4'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'allocation_requests',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('request', sa.Text().with_variant(
            mysql.MEDIUMTEXT(), 'mysql', 'mariadb'), nullable=False),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('provider_uuid', sa.String(36), nullable=True),
        sa.Column('provider_kind', sa.String(16), nullable=True),
        sa.Column('cell_id', sa.Integer, sa.ForeignKey('cell_mappings.id'),
                  nullable=True),
        sa.Column('created_at', sa.DateTime, nullable=True),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('uuid', name='uniq_allocation_requests0uuid'),
    )
    op.create_index('allocation_requests_project_id_idx',
                    'allocation_requests', ['project_id'])
