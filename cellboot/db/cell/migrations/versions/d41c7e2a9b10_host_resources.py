"""The cell's host resources, and what its schedulers publish.

Revision ID: d41c7e2a9b10
Revises: 5e1c0a7d2b3f
Create Date: 2026-12-01 20:30:00.000000

Each cell schedules its own hosts: their resource providers,
inventories and allocations move from the API database into the cell's
own database (``resource_providers``, ``inventories``, ``allocations``,
as they were in the API database, less the provider's cell, which is
now the database itself). ``scheduler_aggregates`` holds, per scheduler
of the cell, the summary the API level schedules cells by. The rows of
a deployment made before this revision are moved by ``cellboot-manage
scheduler migrate_to_cells``.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = 'd41c7e2a9b10'
down_revision = '5e1c0a7d2b3f'
branch_labels = None
depends_on = None


def _stamps():
    return [sa.Column('created_at', sa.DateTime, nullable=True),
            sa.Column('updated_at', sa.DateTime, nullable=True)]


def upgrade():
    op.create_table(
        'resource_providers',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('availability_zone', sa.String(255), nullable=True),
        sa.Column('generation', sa.Integer, nullable=False),
        *_stamps(),
        sa.UniqueConstraint('uuid', name='uniq_resource_providers0uuid'),
        sa.UniqueConstraint('name', name='uniq_resource_providers0name'))
    op.create_table(
        'inventories',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('resource_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id'), nullable=False),
        sa.Column('resource_class', sa.String(255), nullable=False),
        sa.Column('total', sa.Integer, nullable=False),
        sa.Column('reserved', sa.Integer, nullable=False),
        sa.Column('min_unit', sa.Integer, nullable=False),
        sa.Column('max_unit', sa.Integer, nullable=False),
        sa.Column('step_size', sa.Integer, nullable=False),
        sa.Column('allocation_ratio', sa.Float, nullable=False),
        *_stamps(),
        sa.UniqueConstraint('resource_provider_id', 'resource_class',
                            name='uniq_inventories0provider0class'))
    op.create_table(
        'allocations',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('resource_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id'), nullable=False),
        sa.Column('consumer_id', sa.String(36), nullable=False),
        sa.Column('resource_class', sa.String(255), nullable=False),
        sa.Column('used', sa.Integer, nullable=False),
        *_stamps())
    op.create_index('allocations_consumer_id_idx', 'allocations',
                    ['consumer_id'])
    op.create_index('allocations_provider_class_idx', 'allocations',
                    ['resource_provider_id', 'resource_class'])
    op.create_table(
        'scheduler_aggregates',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('scheduler', sa.String(255), nullable=False),
        # Up to aggregate.MAX_DOCUMENT (256 KiB): beyond MySQL's TEXT.
        sa.Column('aggregate', sa.Text().with_variant(
            mysql.MEDIUMTEXT(), 'mysql', 'mariadb'), nullable=False),
        sa.Column('sequence', sa.BigInteger, nullable=False),
        sa.Column('published_at', sa.DateTime, nullable=False),
        sa.UniqueConstraint('scheduler',
                            name='uniq_scheduler_aggregates0scheduler'))
