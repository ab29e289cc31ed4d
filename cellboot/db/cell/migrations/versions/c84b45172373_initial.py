"""Initial cell database: services, compute nodes, instances and history.

Revision ID: c84b45172373
Revises:
Create Date: 2026-11-22 05:07:12.582057

The cell database's first tables, as ``cellboot.db.cell.models`` define
them; cell0 uses the same schema. TaskFlow's tables, which a cell
database also holds, are TaskFlow's own migrations' business
(``cellboot.flowrun.backend``). This file is frozen history: it does not
import the models.
"""

from alembic import op
import sqlalchemy as sa

revision = 'c84b45172373'
down_revision = None
branch_labels = None
depends_on = None


def _id():
    return sa.Column('id', sa.Integer, primary_key=True, autoincrement=True)


def _uuid(name):
    return sa.Column(name, sa.String(36), nullable=False)


def _string(name, nullable=True):
    return sa.Column(name, sa.String(255), nullable=nullable)


def _flag(name):
    return sa.Column(name, sa.Boolean, nullable=False)


def _integer(name):
    return sa.Column(name, sa.Integer, nullable=False)


def _ratio(name):
    return sa.Column(name, sa.Float, nullable=False)


def _text(name):
    return sa.Column(name, sa.Text, nullable=True)


def _time(name):
    return sa.Column(name, sa.DateTime, nullable=True)


def upgrade():
    _create_services()
    _create_compute_nodes()
    _create_instances()
    _create_instance_history()


def _create_services():
    op.create_table(
        'services',
        _id(),
        _string('host', nullable=False),
        _string('binary', nullable=False),
        _flag('disabled'),
        _string('disabled_reason'),
        _time('last_seen_up'),
        _integer('report_count'),
        _time('created_at'),
        _time('updated_at'),
        sa.UniqueConstraint('host', 'binary',
                            name='uniq_services0host0binary'),
    )


def _create_compute_nodes():
    op.create_table(
        'compute_nodes',
        _id(),
        # The uuid of the node's resource provider in the API database.
        _uuid('uuid'),
        _string('host', nullable=False),
        _string('hypervisor_hostname', nullable=False),
        _integer('vcpus'),
        _integer('memory_mb'),
        _integer('local_gb'),
        _ratio('cpu_allocation_ratio'),
        _ratio('ram_allocation_ratio'),
        _ratio('disk_allocation_ratio'),
        # Set by discover_hosts once the host has a host mapping.
        _flag('mapped'),
        _time('created_at'),
        _time('updated_at'),
        sa.UniqueConstraint('uuid', name='uniq_compute_nodes0uuid'),
        sa.UniqueConstraint('host', 'hypervisor_hostname',
                            name='uniq_compute_nodes0host0hypervisor'),
    )
    op.create_index('compute_nodes_mapped_idx', 'compute_nodes', ['mapped'])


def _create_instances():
    op.create_table(
        'instances',
        _id(),
        _uuid('uuid'),
        _string('project_id', nullable=False),
        _string('user_id'),
        _string('display_name'),
        _string('reservation_id'),
        _string('vm_state', nullable=False),
        _string('task_state'),
        _string('host'),
        _string('node'),
        _text('flavor'),
        _string('image_ref'),
        _string('availability_zone'),
        _text('metadata'),
        _time('launched_at'),
        _time('created_at'),
        _time('updated_at'),
        _time('deleted_at'),
        _flag('deleted'),
        sa.UniqueConstraint('uuid', name='uniq_instances0uuid'),
    )
    op.create_index('instances_project_id_idx', 'instances', ['project_id'])
    op.create_index('instances_host_vm_state_idx', 'instances',
                    ['host', 'vm_state'])


def _create_instance_history():
    op.create_table(
        'instance_faults',
        _id(),
        _uuid('instance_uuid'),
        _integer('code'),
        _string('message', nullable=False),
        _text('details'),
        _string('host'),
        _time('created_at'),
    )
    op.create_index('instance_faults_instance_uuid_idx', 'instance_faults',
                    ['instance_uuid'])

    op.create_table(
        'instance_actions',
        _id(),
        _string('action', nullable=False),
        _uuid('instance_uuid'),
        _string('request_id'),
        _string('user_id'),
        _string('project_id'),
        _time('start_time'),
        _time('finish_time'),
        _string('message'),
        _time('created_at'),
        _time('updated_at'),
    )
    op.create_index('instance_actions_instance_uuid_request_id_idx',
                    'instance_actions', ['instance_uuid', 'request_id'])

    op.create_table(
        'instance_actions_events',
        _id(),
        sa.Column('action_id', sa.Integer,
                  sa.ForeignKey('instance_actions.id'), nullable=False),
        _string('event', nullable=False),
        _string('result'),
        _text('traceback'),
        _text('details'),
        _string('host'),
        _time('start_time'),
        _time('finish_time'),
        _time('created_at'),
        _time('updated_at'),
    )
    op.create_index('instance_actions_events_action_id_idx',
                    'instance_actions_events', ['action_id'])
