"""API database tables (docs/architecture.md, "Three kinds of database").

Mappings that route requests to cells, requests that exist before any cell
is chosen (build requests, request specs), flavors, server groups, and the
scheduler's resource tables. Queries use SQLAlchemy Core on these tables;
the declarative classes exist so alembic can compare models and migrations.
"""

import sqlalchemy as sa
from sqlalchemy import orm

from cellboot.db import resource_columns
from cellboot.db.types import created_at
from cellboot.db.types import LargeText
from cellboot.db.types import updated_at
from cellboot.db.types import uuid_column

# Alembic keeps this tree's revision here, apart from TaskFlow's tables and
# the cell tree, so that several trees can share one database.
VERSION_TABLE = 'cellboot_api_alembic_version'

CELL0_UUID = '00000000-0000-0000-0000-000000000000'


class Base(orm.DeclarativeBase):
    pass


class Zone(Base):
    """A level above cells: a region, a zone, ... as deep as wanted.

    ``parent_id`` NULL is a top-level zone; a zone's aggregate is that of
    the cells and zones below it (docs/architecture.md, "Zones").
    """

    __tablename__ = 'zones'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_zones0uuid'),
        sa.UniqueConstraint('name', name='uniq_zones0name'),
        sa.Index('zones_parent_id_idx', 'parent_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = uuid_column(nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    parent_id = sa.Column(sa.Integer,
                          sa.ForeignKey('zones.id',
                                        name='zones_parent_id_fkey'),
                          nullable=True)
    created_at = created_at()
    updated_at = updated_at()


class CellMapping(Base):
    __tablename__ = 'cell_mappings'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_cell_mappings0uuid'),
        sa.UniqueConstraint('name', name='uniq_cell_mappings0name'),
        sa.Index('cell_mappings_zone_id_idx', 'zone_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = uuid_column(nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    database_connection = sa.Column(sa.Text, nullable=False)
    transport_url = sa.Column(sa.Text, nullable=False)
    disabled = sa.Column(sa.Boolean, nullable=False, default=False)
    # NULL: the cell hangs at the top level, as before zones existed.
    zone_id = sa.Column(sa.Integer,
                        sa.ForeignKey('zones.id',
                                      name='cell_mappings_zone_id_fkey'),
                        nullable=True)
    created_at = created_at()
    updated_at = updated_at()


class HostMapping(Base):
    __tablename__ = 'host_mappings'
    __table_args__ = (
        sa.UniqueConstraint('host', name='uniq_host_mappings0host'),
        sa.Index('host_mappings_cell_id_idx', 'cell_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    cell_id = sa.Column(sa.Integer, sa.ForeignKey('cell_mappings.id'),
                        nullable=False)
    host = sa.Column(sa.String(255), nullable=False)
    created_at = created_at()
    updated_at = updated_at()


class InstanceMapping(Base):
    __tablename__ = 'instance_mappings'
    __table_args__ = (
        sa.UniqueConstraint('instance_uuid',
                            name='uniq_instance_mappings0instance_uuid'),
        # A project's live servers, in id order: the quota count and the
        # pages of a server listing.
        sa.Index('instance_mappings_project_id_queued_for_delete_idx',
                 'project_id', 'queued_for_delete'),
        sa.Index('instance_mappings_cell_id_idx', 'cell_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    instance_uuid = uuid_column(nullable=False)
    # NULL while the instance exists only as a build request.
    cell_id = sa.Column(sa.Integer, sa.ForeignKey('cell_mappings.id'),
                        nullable=True)
    project_id = sa.Column(sa.String(255), nullable=False)
    user_id = sa.Column(sa.String(255), nullable=True)
    queued_for_delete = sa.Column(sa.Boolean, nullable=False, default=False)
    # The flavor's size, so that a project's usage is one SUM (quotas).
    vcpus = sa.Column(sa.Integer, nullable=False, default=0,
                      server_default='0')
    memory_mb = sa.Column(sa.Integer, nullable=False, default=0,
                          server_default='0')
    created_at = created_at()
    updated_at = updated_at()


class Quota(Base):
    """A project's limit of one resource, overriding ``[quota]``."""

    __tablename__ = 'quotas'
    __table_args__ = (
        sa.UniqueConstraint('project_id', 'resource',
                            name='uniq_quotas0project_id0resource'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    project_id = sa.Column(sa.String(255), nullable=False)
    resource = sa.Column(sa.String(255), nullable=False)
    hard_limit = sa.Column(sa.Integer, nullable=False)  # -1: unlimited
    created_at = created_at()
    updated_at = updated_at()


class QuotaLock(Base):
    """One row per project, locked by each boot while it checks quota.

    ``SELECT ... FOR UPDATE`` of this row serializes a project's boots on
    MariaDB and PostgreSQL, so that two requests never both see room for
    the last server.
    """

    __tablename__ = 'quota_locks'
    __table_args__ = (
        sa.UniqueConstraint('project_id', name='uniq_quota_locks0project_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    project_id = sa.Column(sa.String(255), nullable=False)
    created_at = created_at()


class BuildRequest(Base):
    __tablename__ = 'build_requests'
    __table_args__ = (
        sa.UniqueConstraint('instance_uuid',
                            name='uniq_build_requests0instance_uuid'),
        sa.Index('build_requests_project_id_idx', 'project_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    instance_uuid = uuid_column(nullable=False)
    project_id = sa.Column(sa.String(255), nullable=False)
    user_id = sa.Column(sa.String(255), nullable=True)
    # JSON: name, flavor, image_ref, metadata, availability_zone, ...
    instance = sa.Column(LargeText, nullable=False)
    created_at = created_at()
    updated_at = updated_at()


class RequestSpec(Base):
    __tablename__ = 'request_specs'
    __table_args__ = (
        sa.UniqueConstraint('instance_uuid',
                            name='uniq_request_specs0instance_uuid'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    instance_uuid = uuid_column(nullable=False)
    spec = sa.Column(LargeText, nullable=False)  # JSON
    created_at = created_at()
    updated_at = updated_at()


class Flavor(Base):
    __tablename__ = 'flavors'
    __table_args__ = (
        sa.UniqueConstraint('flavorid', name='uniq_flavors0flavorid'),
        sa.UniqueConstraint('name', name='uniq_flavors0name'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    flavorid = sa.Column(sa.String(255), nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    vcpus = sa.Column(sa.Integer, nullable=False)
    memory_mb = sa.Column(sa.Integer, nullable=False)
    root_gb = sa.Column(sa.Integer, nullable=False, default=0)
    is_public = sa.Column(sa.Boolean, nullable=False, default=True)
    disabled = sa.Column(sa.Boolean, nullable=False, default=False)
    description = sa.Column(sa.Text, nullable=True)
    created_at = created_at()
    updated_at = updated_at()


class ServerGroup(Base):
    __tablename__ = 'server_groups'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_server_groups0uuid'),
        sa.Index('server_groups_project_id_idx', 'project_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = uuid_column(nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    project_id = sa.Column(sa.String(255), nullable=False)
    user_id = sa.Column(sa.String(255), nullable=True)
    policy = sa.Column(sa.String(32), nullable=False)  # (anti-)affinity
    created_at = created_at()
    updated_at = updated_at()


class ServerGroupMember(Base):
    __tablename__ = 'server_group_members'
    __table_args__ = (
        sa.UniqueConstraint('group_id', 'instance_uuid',
                            name='uniq_server_group_members0group0instance'),
        sa.Index('server_group_members_instance_uuid_idx', 'instance_uuid'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    group_id = sa.Column(sa.Integer, sa.ForeignKey('server_groups.id'),
                         nullable=False)
    instance_uuid = uuid_column(nullable=False)
    created_at = created_at()


class ResourceProvider(resource_columns.ProviderColumns, Base):
    """The API level's providers: shared pools (``is_pool``), and every
    cell's hosts before ``scheduler migrate_to_cells`` moved them into
    their cells (read by that command alone)."""

    __table_args__ = resource_columns.ProviderColumns.table_args() + (
        sa.Index('resource_providers_cell_id_idx', 'cell_id'),
    )
    cell_id = sa.Column(sa.Integer, sa.ForeignKey('cell_mappings.id'),
                        nullable=True)
    # A shared pool (a provider that is not a host: a storage pool, an
    # address pool), serving the cells and zones of its scopes.
    is_pool = sa.Column(sa.Boolean, nullable=False, default=False,
                        server_default=sa.false())


class Inventory(resource_columns.InventoryColumns, Base):
    __table_args__ = resource_columns.InventoryColumns.table_args()


class Allocation(resource_columns.AllocationColumns, Base):
    __table_args__ = resource_columns.AllocationColumns.table_args()


class ProviderTrait(resource_columns.ProviderTraitColumns, Base):
    """The traits of the shared pools."""

    __table_args__ = resource_columns.ProviderTraitColumns.table_args()


class ResourcePoolScope(Base):
    """A cell or a zone that a shared pool serves: every host of that
    cell (or of the cells below that zone) may draw from the pool.
    Exactly one of ``cell_id`` and ``zone_id`` is set."""

    __tablename__ = 'resource_pool_scopes'
    __table_args__ = (
        sa.Index('resource_pool_scopes_provider_idx',
                 'resource_provider_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'), nullable=False)
    cell_id = sa.Column(sa.Integer, sa.ForeignKey('cell_mappings.id'),
                        nullable=True)
    zone_id = sa.Column(sa.Integer, sa.ForeignKey('zones.id'),
                        nullable=True)
    created_at = created_at()


class CustomResourceClass(Base):
    """A ``CUSTOM_*`` resource class an administrator created; the
    standard ones come from os-resource-classes and are not stored."""

    __tablename__ = 'resource_classes'
    __table_args__ = (
        sa.UniqueConstraint('name', name='uniq_resource_classes0name'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    name = sa.Column(sa.String(255), nullable=False)
    created_at = created_at()
    updated_at = updated_at()


class CustomTrait(Base):
    """A ``CUSTOM_*`` trait an administrator created; the standard ones
    come from os-traits and are not stored."""

    __tablename__ = 'traits'
    __table_args__ = (
        sa.UniqueConstraint('name', name='uniq_traits0name'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    name = sa.Column(sa.String(255), nullable=False)
    created_at = created_at()
    updated_at = updated_at()


class FlavorExtraSpec(Base):
    """A flavor's extra spec, as Nova spells them: ``resources:CLASS``
    = N, ``trait:NAME`` = required | forbidden, or any other key (kept,
    not interpreted)."""

    __tablename__ = 'flavor_extra_specs'
    __table_args__ = (
        sa.UniqueConstraint('flavor_id', 'key',
                            name='uniq_flavor_extra_specs0flavor0key'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    flavor_id = sa.Column(sa.Integer, sa.ForeignKey('flavors.id'),
                          nullable=False)
    key = sa.Column(sa.String(255), nullable=False)
    value = sa.Column(sa.String(255), nullable=False)
    created_at = created_at()
    updated_at = updated_at()


class AllocationRequest(Base):
    """A request that is not a server (``/os-allocations``): resources a
    project holds on one provider, a shared pool or a host.

    ``request`` is its JSON (resources, required and forbidden traits,
    ``near``/``far``, availability zone). ``status`` is ``placing`` from
    the moment the row is written until the claim is known to hold
    (``placed``): a row left ``placing`` by a dead process is settled by
    a sweep, which releases whatever it may have claimed. The claim's
    consumer is the row's ``uuid``; ``provider_uuid`` and ``cell_id``
    (a host's cell; NULL for a pool) say where it is.
    """

    __tablename__ = 'allocation_requests'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_allocation_requests0uuid'),
        sa.Index('allocation_requests_project_id_idx', 'project_id'),
    )
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = uuid_column(nullable=False)
    project_id = sa.Column(sa.String(255), nullable=False)
    user_id = sa.Column(sa.String(255), nullable=True)
    request = sa.Column(LargeText, nullable=False)  # JSON
    status = sa.Column(sa.String(16), nullable=False)
    provider_uuid = sa.Column(sa.String(36), nullable=True)
    provider_kind = sa.Column(sa.String(16), nullable=True)
    cell_id = sa.Column(sa.Integer, sa.ForeignKey('cell_mappings.id'),
                        nullable=True)
    created_at = created_at()
    updated_at = updated_at()
