"""Initial API database: mappings, requests, flavors, groups, resources.

Revision ID: 55420de898bd
Revises:
Create Date: 2026-11-22 05:07:12.582057

The API database's first tables, as ``cellboot.db.api.models`` define
them. This file is frozen history: it does not import the models, so
later changes to them need a new revision (the model/migration
comparison test says so).
"""

from alembic import op
import sqlalchemy as sa

revision = '55420de898bd'
down_revision = None
branch_labels = None
depends_on = None


def _id():
    return sa.Column('id', sa.Integer, primary_key=True, autoincrement=True)


def _uuid(name):
    return sa.Column(name, sa.String(36), nullable=False)


def _string(name, nullable=False):
    return sa.Column(name, sa.String(255), nullable=nullable)


def _flag(name):
    return sa.Column(name, sa.Boolean, nullable=False)


def _integer(name):
    return sa.Column(name, sa.Integer, nullable=False)


def _created_at():
    return sa.Column('created_at', sa.DateTime, nullable=True)


def _updated_at():
    return sa.Column('updated_at', sa.DateTime, nullable=True)


def _cell_id(nullable):
    return sa.Column('cell_id', sa.Integer, sa.ForeignKey('cell_mappings.id'),
                     nullable=nullable)


def upgrade():
    _create_cell_routing()
    _create_requests()
    _create_flavors()
    _create_server_groups()
    _create_resources()


def _create_cell_routing():
    op.create_table(
        'cell_mappings',
        _id(),
        _uuid('uuid'),
        _string('name'),
        sa.Column('database_connection', sa.Text, nullable=False),
        sa.Column('transport_url', sa.Text, nullable=False),
        _flag('disabled'),
        _created_at(),
        _updated_at(),
        sa.UniqueConstraint('uuid', name='uniq_cell_mappings0uuid'),
        sa.UniqueConstraint('name', name='uniq_cell_mappings0name'),
    )

    op.create_table(
        'host_mappings',
        _id(),
        _cell_id(nullable=False),
        _string('host'),
        _created_at(),
        _updated_at(),
        sa.UniqueConstraint('host', name='uniq_host_mappings0host'),
    )
    op.create_index('host_mappings_cell_id_idx', 'host_mappings', ['cell_id'])

    op.create_table(
        'instance_mappings',
        _id(),
        _uuid('instance_uuid'),
        # NULL while the instance exists only as a build request.
        _cell_id(nullable=True),
        _string('project_id'),
        _string('user_id', nullable=True),
        _flag('queued_for_delete'),
        _created_at(),
        _updated_at(),
        sa.UniqueConstraint('instance_uuid',
                            name='uniq_instance_mappings0instance_uuid'),
    )
    op.create_index('instance_mappings_project_id_idx', 'instance_mappings',
                    ['project_id'])
    op.create_index('instance_mappings_cell_id_idx', 'instance_mappings',
                    ['cell_id'])


def _create_requests():
    op.create_table(
        'build_requests',
        _id(),
        _uuid('instance_uuid'),
        _string('project_id'),
        _string('user_id', nullable=True),
        sa.Column('instance', sa.Text, nullable=False),
        _created_at(),
        _updated_at(),
        sa.UniqueConstraint('instance_uuid',
                            name='uniq_build_requests0instance_uuid'),
    )
    op.create_index('build_requests_project_id_idx', 'build_requests',
                    ['project_id'])

    op.create_table(
        'request_specs',
        _id(),
        _uuid('instance_uuid'),
        sa.Column('spec', sa.Text, nullable=False),
        _created_at(),
        _updated_at(),
        sa.UniqueConstraint('instance_uuid',
                            name='uniq_request_specs0instance_uuid'),
    )


def _create_flavors():
    op.create_table(
        'flavors',
        _id(),
        _string('flavorid'),
        _string('name'),
        _integer('vcpus'),
        _integer('memory_mb'),
        _integer('root_gb'),
        _flag('is_public'),
        _flag('disabled'),
        sa.Column('description', sa.Text, nullable=True),
        _created_at(),
        _updated_at(),
        sa.UniqueConstraint('flavorid', name='uniq_flavors0flavorid'),
        sa.UniqueConstraint('name', name='uniq_flavors0name'),
    )


def _create_server_groups():
    op.create_table(
        'server_groups',
        _id(),
        _uuid('uuid'),
        _string('name'),
        _string('project_id'),
        _string('user_id', nullable=True),
        sa.Column('policy', sa.String(32), nullable=False),
        _created_at(),
        _updated_at(),
        sa.UniqueConstraint('uuid', name='uniq_server_groups0uuid'),
    )
    op.create_index('server_groups_project_id_idx', 'server_groups',
                    ['project_id'])

    op.create_table(
        'server_group_members',
        _id(),
        sa.Column('group_id', sa.Integer, sa.ForeignKey('server_groups.id'),
                  nullable=False),
        _uuid('instance_uuid'),
        _created_at(),
        sa.UniqueConstraint('group_id', 'instance_uuid',
                            name='uniq_server_group_members0group0instance'),
    )
    op.create_index('server_group_members_instance_uuid_idx',
                    'server_group_members', ['instance_uuid'])


def _provider_id():
    return sa.Column('resource_provider_id', sa.Integer,
                     sa.ForeignKey('resource_providers.id'), nullable=False)


def _create_resources():
    op.create_table(
        'resource_providers',
        _id(),
        _uuid('uuid'),
        _string('name'),
        _cell_id(nullable=True),
        _string('availability_zone', nullable=True),
        # The compare-and-swap token of atomic claims.
        _integer('generation'),
        _created_at(),
        _updated_at(),
        sa.UniqueConstraint('uuid', name='uniq_resource_providers0uuid'),
        sa.UniqueConstraint('name', name='uniq_resource_providers0name'),
    )
    op.create_index('resource_providers_cell_id_idx', 'resource_providers',
                    ['cell_id'])

    op.create_table(
        'inventories',
        _id(),
        _provider_id(),
        _string('resource_class'),
        _integer('total'),
        _integer('reserved'),
        _integer('min_unit'),
        _integer('max_unit'),
        _integer('step_size'),
        sa.Column('allocation_ratio', sa.Float, nullable=False),
        _created_at(),
        _updated_at(),
        sa.UniqueConstraint('resource_provider_id', 'resource_class',
                            name='uniq_inventories0provider0class'),
    )

    op.create_table(
        'allocations',
        _id(),
        _provider_id(),
        _uuid('consumer_id'),
        _string('resource_class'),
        _integer('used'),
        _created_at(),
        _updated_at(),
    )
    op.create_index('allocations_consumer_id_idx', 'allocations',
                    ['consumer_id'])
    op.create_index('allocations_provider_class_idx', 'allocations',
                    ['resource_provider_id', 'resource_class'])
