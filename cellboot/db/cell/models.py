"""Cell database tables; cell0 uses the same schema.

A cell database knows nothing of the API database: it holds its services,
compute nodes, instances and their faults and actions, and the resources
of its hosts (one resource provider per compute node, its inventories and
the allocations of the cell's instances), which only the cell's own
schedulers write. The cell's reschedule flows are persisted next to
these, in TaskFlow's own tables.
"""

import sqlalchemy as sa
from sqlalchemy import orm

from cellboot.db import resource_columns
from cellboot.db.types import created_at
from cellboot.db.types import LargeText
from cellboot.db.types import updated_at
from cellboot.db.types import uuid_column

VERSION_TABLE = 'cellboot_cell_alembic_version'


class Base(orm.DeclarativeBase):
    pass


class Service(Base):
    __tablename__ = 'services'
    __table_args__ = (
        sa.UniqueConstraint('host', 'binary',
                            name='uniq_services0host0binary'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    host = sa.Column(sa.String(255), nullable=False)
    binary = sa.Column(sa.String(255), nullable=False)
    disabled = sa.Column(sa.Boolean, nullable=False, default=False)
    disabled_reason = sa.Column(sa.String(255), nullable=True)
    last_seen_up = sa.Column(sa.DateTime, nullable=True)
    report_count = sa.Column(sa.Integer, nullable=False, default=0)
    created_at = created_at()
    updated_at = updated_at()


class ComputeNode(Base):
    __tablename__ = 'compute_nodes'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_compute_nodes0uuid'),
        sa.UniqueConstraint('host', 'hypervisor_hostname',
                            name='uniq_compute_nodes0host0hypervisor'),
        sa.Index('compute_nodes_mapped_idx', 'mapped'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = uuid_column(nullable=False)  # = its resource provider's uuid
    host = sa.Column(sa.String(255), nullable=False)
    hypervisor_hostname = sa.Column(sa.String(255), nullable=False)
    vcpus = sa.Column(sa.Integer, nullable=False)
    memory_mb = sa.Column(sa.Integer, nullable=False)
    local_gb = sa.Column(sa.Integer, nullable=False)
    cpu_allocation_ratio = sa.Column(sa.Float, nullable=False, default=1.0)
    ram_allocation_ratio = sa.Column(sa.Float, nullable=False, default=1.0)
    disk_allocation_ratio = sa.Column(sa.Float, nullable=False, default=1.0)
    # Set by discover_hosts once the host has a host mapping.
    mapped = sa.Column(sa.Boolean, nullable=False, default=False)
    created_at = created_at()
    updated_at = updated_at()


class Instance(Base):
    __tablename__ = 'instances'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_instances0uuid'),
        sa.Index('instances_project_id_idx', 'project_id'),
        sa.Index('instances_host_vm_state_idx', 'host', 'vm_state'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = uuid_column(nullable=False)
    project_id = sa.Column(sa.String(255), nullable=False)
    user_id = sa.Column(sa.String(255), nullable=True)
    display_name = sa.Column(sa.String(255), nullable=True)
    reservation_id = sa.Column(sa.String(255), nullable=True)
    vm_state = sa.Column(sa.String(255), nullable=False)
    task_state = sa.Column(sa.String(255), nullable=True)
    host = sa.Column(sa.String(255), nullable=True)
    node = sa.Column(sa.String(255), nullable=True)
    flavor = sa.Column(sa.Text, nullable=True)  # JSON of the flavor
    image_ref = sa.Column(sa.String(255), nullable=True)
    availability_zone = sa.Column(sa.String(255), nullable=True)
    metadata_json = sa.Column('metadata', LargeText, nullable=True)
    launched_at = sa.Column(sa.DateTime, nullable=True)
    # JSON: what the build was last cast with besides the instance
    # (``Instance.build_args``), and how often it was re-sent to its host.
    build_args = sa.Column(LargeText, nullable=True)
    build_recasts = sa.Column(sa.Integer, nullable=False, default=0,
                              server_default='0')
    created_at = created_at()
    updated_at = updated_at()
    deleted_at = sa.Column(sa.DateTime, nullable=True)
    deleted = sa.Column(sa.Boolean, nullable=False, default=False)


class InstanceFault(Base):
    __tablename__ = 'instance_faults'
    __table_args__ = (
        sa.Index('instance_faults_instance_uuid_idx', 'instance_uuid'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    instance_uuid = uuid_column(nullable=False)
    code = sa.Column(sa.Integer, nullable=False)
    message = sa.Column(sa.String(255), nullable=False)
    details = sa.Column(sa.Text, nullable=True)
    host = sa.Column(sa.String(255), nullable=True)
    created_at = created_at()


class InstanceAction(Base):
    __tablename__ = 'instance_actions'
    __table_args__ = (
        sa.Index('instance_actions_instance_uuid_request_id_idx',
                 'instance_uuid', 'request_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    action = sa.Column(sa.String(255), nullable=False)
    instance_uuid = uuid_column(nullable=False)
    request_id = sa.Column(sa.String(255), nullable=True)
    user_id = sa.Column(sa.String(255), nullable=True)
    project_id = sa.Column(sa.String(255), nullable=True)
    start_time = sa.Column(sa.DateTime, nullable=True)
    finish_time = sa.Column(sa.DateTime, nullable=True)
    message = sa.Column(sa.String(255), nullable=True)
    created_at = created_at()
    updated_at = updated_at()


class InstanceActionEvent(Base):
    __tablename__ = 'instance_actions_events'
    __table_args__ = (
        sa.Index('instance_actions_events_action_id_idx', 'action_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    action_id = sa.Column(sa.Integer, sa.ForeignKey('instance_actions.id'),
                          nullable=False)
    event = sa.Column(sa.String(255), nullable=False)
    result = sa.Column(sa.String(255), nullable=True)
    traceback = sa.Column(sa.Text, nullable=True)
    details = sa.Column(sa.Text, nullable=True)
    host = sa.Column(sa.String(255), nullable=True)
    start_time = sa.Column(sa.DateTime, nullable=True)
    finish_time = sa.Column(sa.DateTime, nullable=True)
    created_at = created_at()
    updated_at = updated_at()


class ResourceProvider(resource_columns.ProviderColumns, Base):
    """One per compute node of the cell; uuid = the compute node's uuid."""

    __table_args__ = resource_columns.ProviderColumns.table_args()


class Inventory(resource_columns.InventoryColumns, Base):
    __table_args__ = resource_columns.InventoryColumns.table_args()


class Allocation(resource_columns.AllocationColumns, Base):
    __table_args__ = resource_columns.AllocationColumns.table_args()


class ProviderTrait(resource_columns.ProviderTraitColumns, Base):
    __table_args__ = resource_columns.ProviderTraitColumns.table_args()


class SchedulerAggregate(Base):
    """What one of the cell's schedulers last published of the cell.

    The API level reads these rows (it holds no host of its own): per
    resource class the cell's capacity, free room and largest free room
    on one host, its zones and live hosts (``cellboot.scheduler.
    aggregate``). One row per scheduler of the cell, rewritten in place;
    ``sequence`` grows with every rewrite.
    """

    __tablename__ = 'scheduler_aggregates'
    __table_args__ = (
        sa.UniqueConstraint('scheduler',
                            name='uniq_scheduler_aggregates0scheduler'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    scheduler = sa.Column(sa.String(255), nullable=False)
    aggregate = sa.Column(LargeText, nullable=False)  # JSON, <= 256 KiB
    sequence = sa.Column(sa.BigInteger, nullable=False, default=0)
    published_at = sa.Column(sa.DateTime, nullable=False)


class SchedulerChange(Base):
    """One entry of the change feed of the cell's schedulers.

    Written by a scheduler in the same transaction as the claim, release
    or provider update it announces (so a committed change is always
    announced), or alone for a build-failure count; pulled by the cell's
    other schedulers by ``seq`` (``cellboot.scheduler.sync``). ``kind``
    ``usage``: re-read provider ``key``; ``build``: ``key``'s consecutive
    build failures are ``value``. ``origin`` names the writing scheduler,
    which skips its own entries. ``at`` (epoch seconds, sub-second) is
    what the trim and the staleness figures go by. Trimmed after
    ``[scheduler] sync_retention`` seconds.
    """

    __tablename__ = 'scheduler_changes'
    # AUTOINCREMENT on SQLite: without it a trimmed-empty table would
    # hand out its sequence numbers again from 1.
    __table_args__ = {'sqlite_autoincrement': True}
    seq = sa.Column(sa.BigInteger().with_variant(sa.Integer, 'sqlite'),
                    primary_key=True, autoincrement=True)
    kind = sa.Column(sa.String(16), nullable=False)
    key = sa.Column(sa.String(36), nullable=False)
    value = sa.Column(sa.String(255), nullable=True)
    origin = sa.Column(sa.String(36), nullable=True)
    at = sa.Column(sa.Double, nullable=False)
