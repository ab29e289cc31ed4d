"""Generic resources: custom classes and traits, flavor extra specs, pools.

Revision ID: a5c3e9f1d2b4
Revises: 4e8b2c71d5a3
Create Date: 2026-12-07 01:10:00.000000

* ``resource_classes`` and ``traits``: the ``CUSTOM_*`` classes and
  traits an administrator created (the standard ones come from
  os-resource-classes and os-traits and are not stored);
* ``flavor_extra_specs``: ``resources:CLASS`` and ``trait:NAME`` as Nova
  writes them. Existing flavors get none and ask for what they asked;
* ``resource_providers.is_pool``: the API level's shared pools. Existing
  rows are hosts waiting for ``scheduler migrate_to_cells``: false;
* ``resource_provider_traits``: the pools' traits;
* ``resource_pool_scopes``: the cells and zones each pool serves.

Frozen history: the tables are described here, not imported.
"""

from alembic import op
import sqlalchemy as sa

revision = 'a5c3e9f1d2b4'
down_revision = '4e8b2c71d5a3'
branch_labels = None
depends_on = None


def _named(table):
    op.create_table(
        table,
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=True),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('name', name=f'uniq_{table}0name'),
    )


def upgrade():
    _named('resource_classes')
    _named('traits')
    op.create_table(
        'flavor_extra_specs',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('flavor_id', sa.Integer, sa.ForeignKey('flavors.id'),
                  nullable=False),
        sa.Column('key', sa.String(255), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=True),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('flavor_id', 'key',
                            name='uniq_flavor_extra_specs0flavor0key'),
    )
    with op.batch_alter_table('resource_providers') as batch:
        batch.add_column(sa.Column('is_pool', sa.Boolean, nullable=False,
                                   server_default=sa.false()))
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
    op.create_table(
        'resource_pool_scopes',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('resource_provider_id', sa.Integer,
                  sa.ForeignKey('resource_providers.id'), nullable=False),
        sa.Column('cell_id', sa.Integer, sa.ForeignKey('cell_mappings.id'),
                  nullable=True),
        sa.Column('zone_id', sa.Integer, sa.ForeignKey('zones.id'),
                  nullable=True),
        sa.Column('created_at', sa.DateTime, nullable=True),
    )
    op.create_index('resource_pool_scopes_provider_idx',
                    'resource_pool_scopes', ['resource_provider_id'])
