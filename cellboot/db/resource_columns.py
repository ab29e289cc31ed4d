"""The columns of host resources, shared by the two schemas that hold them.

A cell's database holds its hosts' resource providers, inventories and
allocations; the API database held every cell's before the scheduler
was split by cell, and keeps them for ``cellboot-manage scheduler
migrate_to_cells`` to move from. Both define the same three tables;
the columns are declared once here, as declarative mixins, so that the
legacy copy cannot drift from what it is migrated into. Traits follow
the same rule: a cell's hosts have them in the cell's database, the API
level's shared pools in the API database.
"""

import sqlalchemy as sa

from cellboot.db.types import created_at
from cellboot.db.types import updated_at
from cellboot.db.types import uuid_column


class ProviderColumns:
    """One per compute node; uuid = the compute node's uuid."""

    __tablename__ = 'resource_providers'
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = uuid_column(nullable=False)
    name = sa.Column(sa.String(255), nullable=False)  # the compute host
    availability_zone = sa.Column(sa.String(255), nullable=True)
    # Bumped by every claim: the compare-and-swap token of atomic claims.
    generation = sa.Column(sa.Integer, nullable=False, default=0)
    created_at = created_at()
    updated_at = updated_at()

    # Functions: a constraint or index belongs to one table, and each
    # schema's table needs its own.
    @staticmethod
    def table_args():
        return (sa.UniqueConstraint('uuid',
                                    name='uniq_resource_providers0uuid'),
                sa.UniqueConstraint('name',
                                    name='uniq_resource_providers0name'))


class InventoryColumns:
    __tablename__ = 'inventories'
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'), nullable=False)
    resource_class = sa.Column(sa.String(255), nullable=False)
    total = sa.Column(sa.Integer, nullable=False)
    reserved = sa.Column(sa.Integer, nullable=False, default=0)
    min_unit = sa.Column(sa.Integer, nullable=False, default=1)
    max_unit = sa.Column(sa.Integer, nullable=False)
    step_size = sa.Column(sa.Integer, nullable=False, default=1)
    allocation_ratio = sa.Column(sa.Float, nullable=False, default=1.0)
    created_at = created_at()
    updated_at = updated_at()

    @staticmethod
    def table_args():
        return (sa.UniqueConstraint('resource_provider_id', 'resource_class',
                                    name='uniq_inventories0provider0class'),)


class AllocationColumns:
    __tablename__ = 'allocations'
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'), nullable=False)
    consumer_id = uuid_column(nullable=False)  # the instance uuid
    resource_class = sa.Column(sa.String(255), nullable=False)
    used = sa.Column(sa.Integer, nullable=False)
    created_at = created_at()
    updated_at = updated_at()

    @staticmethod
    def table_args():
        return (sa.Index('allocations_consumer_id_idx', 'consumer_id'),
                sa.Index('allocations_provider_class_idx',
                         'resource_provider_id', 'resource_class'))


class ProviderTraitColumns:
    """A trait a provider has (``HW_CPU_X86_AVX2``, ``CUSTOM_SSD``): one
    row per provider and trait, nothing consumed."""

    __tablename__ = 'resource_provider_traits'
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    resource_provider_id = sa.Column(
        sa.Integer, sa.ForeignKey('resource_providers.id'), nullable=False)
    trait = sa.Column(sa.String(255), nullable=False)
    created_at = created_at()

    @staticmethod
    def table_args():
        return (sa.UniqueConstraint('resource_provider_id', 'trait',
                                    name='uniq_provider_traits0provider0'
                                         'trait'),)
