"""The rows of Nova's own databases that the Nova mirror reads and writes.

nova-api reads a server from its API database (``build_requests`` until
``instance_mappings.cell_id`` names a cell) and then from that cell's
Nova-schema database (``instances`` with ``instance_extra``,
``instance_info_caches``, metadata, tags, ``instance_faults``). These
are those tables as Nova 34 creates them (``nova-manage api_db sync`` /
``db sync``), declared in SQLAlchemy Core with the columns cellboot
touches, so that nothing of nova is imported. A column left out is one
Nova lets be NULL; every soft-delete column Nova reads (``deleted`` is an
integer: 0 live, the row's id once deleted) is written explicitly,
because Nova's defaults live in its Python models, not in the schema.
"""

import sqlalchemy as sa

API = sa.MetaData()
CELL = sa.MetaData()


def _stamps():
    return [sa.Column('created_at', sa.DateTime),
            sa.Column('updated_at', sa.DateTime)]


def _soft_delete():
    return _stamps() + [sa.Column('deleted_at', sa.DateTime),
                        sa.Column('deleted', sa.Integer)]


# -- Nova's API database --------------------------------------------------

CELL_MAPPINGS = sa.Table(
    'cell_mappings', API,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('uuid', sa.String(36)),
    sa.Column('name', sa.String(255)),
    sa.Column('database_connection', sa.Text),
)

INSTANCE_MAPPINGS = sa.Table(
    'instance_mappings', API,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('instance_uuid', sa.String(36)),
    sa.Column('cell_id', sa.Integer),
    sa.Column('project_id', sa.String(255)),
    sa.Column('queued_for_delete', sa.Boolean),
    *_stamps(),
)

BUILD_REQUESTS = sa.Table(
    'build_requests', API,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('instance_uuid', sa.String(36)),
    sa.Column('project_id', sa.String(255)),
    sa.Column('instance', sa.Text),
    sa.Column('block_device_mappings', sa.Text),
    sa.Column('tags', sa.Text),
    *_stamps(),
)

REQUEST_SPECS = sa.Table(
    'request_specs', API,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('instance_uuid', sa.String(36)),
    sa.Column('spec', sa.Text),
)

# -- a Nova cell database -------------------------------------------------

INSTANCES = sa.Table(
    'instances', CELL,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('uuid', sa.String(36)),
    sa.Column('user_id', sa.String(255)),
    sa.Column('project_id', sa.String(255)),
    sa.Column('image_ref', sa.String(255)),
    sa.Column('kernel_id', sa.String(255)),
    sa.Column('ramdisk_id', sa.String(255)),
    sa.Column('hostname', sa.String(255)),
    sa.Column('launch_index', sa.Integer),
    sa.Column('key_name', sa.String(255)),
    sa.Column('key_data', sa.Text),
    sa.Column('power_state', sa.Integer),
    sa.Column('vm_state', sa.String(255)),
    sa.Column('task_state', sa.String(255)),
    sa.Column('memory_mb', sa.Integer),
    sa.Column('vcpus', sa.Integer),
    sa.Column('root_gb', sa.Integer),
    sa.Column('ephemeral_gb', sa.Integer),
    sa.Column('host', sa.String(255)),
    sa.Column('node', sa.String(255)),
    sa.Column('instance_type_id', sa.Integer),
    sa.Column('user_data', sa.Text),
    sa.Column('reservation_id', sa.String(255)),
    sa.Column('launched_at', sa.DateTime),
    sa.Column('terminated_at', sa.DateTime),
    sa.Column('availability_zone', sa.String(255)),
    sa.Column('display_name', sa.String(255)),
    sa.Column('display_description', sa.String(255)),
    sa.Column('launched_on', sa.Text),
    sa.Column('locked', sa.Boolean),
    sa.Column('os_type', sa.String(255)),
    sa.Column('architecture', sa.String(255)),
    sa.Column('vm_mode', sa.String(255)),
    sa.Column('root_device_name', sa.String(255)),
    sa.Column('config_drive', sa.String(255)),
    sa.Column('auto_disk_config', sa.Boolean),
    sa.Column('progress', sa.Integer),
    sa.Column('shutdown_terminate', sa.Boolean),
    sa.Column('disable_terminate', sa.Boolean),
    sa.Column('cleaned', sa.Integer),
    sa.Column('hidden', sa.Boolean),
    *_soft_delete(),
)

INSTANCE_EXTRA = sa.Table(
    'instance_extra', CELL,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('instance_uuid', sa.String(36)),
    sa.Column('flavor', sa.Text),
    *_soft_delete(),
)

INSTANCE_INFO_CACHES = sa.Table(
    'instance_info_caches', CELL,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('instance_uuid', sa.String(36)),
    sa.Column('network_info', sa.Text),
    *_soft_delete(),
)

INSTANCE_METADATA = sa.Table(
    'instance_metadata', CELL,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('instance_uuid', sa.String(36)),
    sa.Column('key', sa.String(255)),
    sa.Column('value', sa.String(255)),
    *_soft_delete(),
)

INSTANCE_SYSTEM_METADATA = sa.Table(
    'instance_system_metadata', CELL,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('instance_uuid', sa.String(36)),
    sa.Column('key', sa.String(255)),
    sa.Column('value', sa.String(255)),
    *_soft_delete(),
)

TAGS = sa.Table(
    'tags', CELL,
    sa.Column('resource_id', sa.String(36), primary_key=True),
    sa.Column('tag', sa.String(80), primary_key=True),
)

INSTANCE_FAULTS = sa.Table(
    'instance_faults', CELL,
    sa.Column('id', sa.Integer, primary_key=True),
    sa.Column('instance_uuid', sa.String(36)),
    sa.Column('code', sa.Integer),
    sa.Column('message', sa.String(255)),
    sa.Column('details', sa.Text),
    sa.Column('host', sa.String(255)),
    *_soft_delete(),
)

# The tables of one Nova instance, in the order they are written (the
# others name ``instances.uuid`` in a foreign key).
INSTANCE_TABLES = (INSTANCES, INSTANCE_EXTRA, INSTANCE_INFO_CACHES,
                   INSTANCE_METADATA, INSTANCE_SYSTEM_METADATA, TAGS)
