"""The traits of a cell's host providers.

Revision ID: f3b8d1c2a7e6
Revises: e7a2c91f3b05
Create Date: 2026-12-07 01:10:00.000000

``resource_provider_traits``: one row per host provider and trait, as
its compute host reports them (from its configuration) or an operator
sets them. Existing providers get none until their host next reports.

Frozen history: the table is described here, not imported.
"""

from alembic import op
import sqlalchemy as sa

revision = 'f3b8d1c2a7e6'
down_revision = 'e7a2c91f3b05'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'resource_provider_traits',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('resource_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id'), nullable=False),
        sa.Column('trait', sa.String(255), nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('resource_provider_id', 'trait',
                            name='uniq_provider_traits0provider0trait'),
    )
