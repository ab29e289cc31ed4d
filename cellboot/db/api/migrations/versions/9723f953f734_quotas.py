"""Quotas: per-project limits, a lock row per project, usage on mappings.

Revision ID: 9723f953f734
Revises: 55420de898bd
Create Date: 2026-12-02 09:14:27.301846

* ``quotas``: a project's limit of one resource (instances, cores, ram),
  overriding the ``[quota]`` defaults;
* ``quota_locks``: one row per project, locked while a boot checks its
  quota, so that concurrent boots of a project queue there;
* ``instance_mappings.vcpus`` and ``memory_mb``: the size of each
  server's flavor, so that a project's usage is one SUM over its live
  mappings. Existing mappings are filled in from their request specs
  (the flavor the server was booted with); a mapping without one counts
  as an instance of no size.
* the project index of ``instance_mappings`` also covers
  ``queued_for_delete``: the quota count and the pages of a server
  listing read only a project's live servers.

Frozen history: the tables are described here, not imported.
"""

from alembic import op
from oslo_serialization import jsonutils
import sqlalchemy as sa

revision = '9723f953f734'
down_revision = '55420de898bd'
branch_labels = None
depends_on = None

# Mappings filled in per statement batch while backfilling.
BACKFILL_BATCH = 1000

_MAPPINGS = sa.table(
    'instance_mappings',
    sa.column('id', sa.Integer),
    sa.column('instance_uuid', sa.String),
    sa.column('vcpus', sa.Integer),
    sa.column('memory_mb', sa.Integer),
)
_SPECS = sa.table(
    'request_specs',
    sa.column('instance_uuid', sa.String),
    sa.column('spec', sa.Text),
)


def upgrade():
    op.create_table(
        'quotas',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('resource', sa.String(255), nullable=False),
        sa.Column('hard_limit', sa.Integer, nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=True),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('project_id', 'resource',
                            name='uniq_quotas0project_id0resource'),
    )
    op.create_table(
        'quota_locks',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=True),
        sa.UniqueConstraint('project_id',
                            name='uniq_quota_locks0project_id'),
    )
    with op.batch_alter_table('instance_mappings') as batch:
        batch.add_column(sa.Column('vcpus', sa.Integer, nullable=False,
                                   server_default='0'))
        batch.add_column(sa.Column('memory_mb', sa.Integer, nullable=False,
                                   server_default='0'))
    op.create_index('instance_mappings_project_id_queued_for_delete_idx',
                    'instance_mappings', ['project_id', 'queued_for_delete'])
    op.drop_index('instance_mappings_project_id_idx',
                  table_name='instance_mappings')
    _backfill_sizes(op.get_bind())


def _size(spec_text):
    """(vcpus, memory_mb) of a serialized request spec's flavor."""
    try:
        flavor = jsonutils.loads(spec_text).get('flavor') or {}
        return int(flavor.get('vcpus') or 0), int(flavor.get('memory_mb')
                                                  or 0)
    except (ValueError, TypeError, AttributeError):
        return 0, 0


def _backfill_sizes(connection):
    """Fill in each mapping's size from its request spec, in batches."""
    last_id = 0
    update = sa.update(_MAPPINGS).where(
        _MAPPINGS.c.id == sa.bindparam('mapping_id')).values(
        vcpus=sa.bindparam('size_vcpus'),
        memory_mb=sa.bindparam('size_memory_mb'))
    while True:
        rows = connection.execute(
            sa.select(_MAPPINGS.c.id, _SPECS.c.spec).select_from(
                _MAPPINGS.join(_SPECS, _SPECS.c.instance_uuid ==
                               _MAPPINGS.c.instance_uuid)).where(
                _MAPPINGS.c.id > last_id).order_by(_MAPPINGS.c.id).limit(
                BACKFILL_BATCH)).all()
        if not rows:
            return
        sizes = []
        for row in rows:
            vcpus, memory_mb = _size(row.spec)
            if vcpus or memory_mb:
                sizes.append({'mapping_id': row.id, 'size_vcpus': vcpus,
                              'size_memory_mb': memory_mb})
        if sizes:
            connection.execute(update, sizes)
        last_id = rows[-1].id
