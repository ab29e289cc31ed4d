"""Zones: optional levels above cells.

Revision ID: 4e8b2c71d5a3
Revises: 237bf1d57ee6
Create Date: 2026-12-06 17:45:00.000000

* ``zones``: a named level above cells (a region, a zone, ...); its
  ``parent_id`` is the zone it sits in, NULL at the top level;
* ``cell_mappings.zone_id``: the zone a cell sits in. Existing cells get
  NULL: they hang at the top level and are scheduled exactly as before.

Frozen history: the tables are described here, not imported.
"""

from alembic import op
import sqlalchemy as sa

revision = '4e8b2c71d5a3'
down_revision = '237bf1d57ee6'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'zones',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('parent_id', sa.Integer,
                  sa.ForeignKey('zones.id', name='zones_parent_id_fkey'),
                  nullable=True),
        sa.Column('created_at', sa.DateTime, nullable=True),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('uuid', name='uniq_zones0uuid'),
        sa.UniqueConstraint('name', name='uniq_zones0name'),
    )
    op.create_index('zones_parent_id_idx', 'zones', ['parent_id'])
    with op.batch_alter_table('cell_mappings') as batch:
        batch.add_column(sa.Column('zone_id', sa.Integer, nullable=True))
        batch.create_foreign_key('cell_mappings_zone_id_fkey', 'zones',
                                 ['zone_id'], ['id'])
        batch.create_index('cell_mappings_zone_id_idx', ['zone_id'])
