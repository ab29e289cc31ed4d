"""Compute nodes: the hypervisors of a cell and their capacity.

A compute host writes its node into its cell's database at start; the
node's uuid is also its resource provider's uuid in the scheduler. A new
node is unmapped until ``cellboot-manage cell_v2 discover_hosts`` gives
its host a host mapping and marks it ``mapped``.
"""

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models
from cellboot import exception
from cellboot.objects import base

_NODES = models.ComputeNode.__table__

RATIO_FIELDS = frozenset({'cpu_allocation_ratio', 'ram_allocation_ratio',
                          'disk_allocation_ratio'})
UPDATABLE_FIELDS = RATIO_FIELDS | {'vcpus', 'memory_mb', 'local_gb',
                                   'mapped'}


def _check_fields(values, allowed):
    unknown = set(values) - allowed
    if unknown:
        raise exception.Invalid(
            reason=f'compute nodes have no such field(s) '
                   f'{", ".join(sorted(unknown))}')


def _get(context, where):
    query = sa.select(_NODES).where(where).order_by(
        _NODES.c.host, _NODES.c.hypervisor_hostname)
    return context.session.execute(query).all()


@cell_db.writer
def _create(context, values):
    result = context.session.execute(sa.insert(_NODES).values(**values))
    return _get(context, _NODES.c.id == result.inserted_primary_key[0])[0]


@cell_db.reader
def _get_where(context, where):
    return _get(context, where)


@cell_db.reader
def _count(context):
    return context.session.execute(
        sa.select(sa.func.count()).select_from(_NODES)).scalar()


@cell_db.writer
def _update(context, node_id, values):
    where = _NODES.c.id == node_id
    if not context.session.execute(
            sa.update(_NODES).where(where).values(**values)).rowcount:
        return None
    return _get(context, where)[0]


@cell_db.writer
def _destroy(context, node_id):
    return context.session.execute(
        sa.delete(_NODES).where(_NODES.c.id == node_id)).rowcount


class ComputeNode(base.DomainObject):
    """A hypervisor: its host, capacity and allocation ratios."""

    FIELDS = ('id', 'uuid', 'host', 'hypervisor_hostname', 'vcpus',
              'memory_mb', 'local_gb', 'cpu_allocation_ratio',
              'ram_allocation_ratio', 'disk_allocation_ratio', 'mapped')

    @classmethod
    def create(cls, context, host, hypervisor_hostname, vcpus, memory_mb,
               local_gb, uuid=None, **ratios):
        """Record a node; a taken uuid or host+node raises Exists.

        ``ratios`` are ``cpu_``/``ram_``/``disk_allocation_ratio`` (1.0
        when not given).
        """
        _check_fields(ratios, RATIO_FIELDS)
        values = dict(ratios, uuid=uuid or uuidutils.generate_uuid(),
                      host=host, hypervisor_hostname=hypervisor_hostname,
                      vcpus=vcpus, memory_mb=memory_mb, local_gb=local_gb,
                      mapped=False)
        try:
            return cls.from_row(_create(context, values))
        except db_exc.DBDuplicateEntry as exc:
            raise exception.ComputeNodeExists(
                node=f'{hypervisor_hostname} ({values["uuid"]}) on host '
                     f'{host}') from exc

    @classmethod
    def get_by_uuid(cls, context, uuid):
        rows = _get_where(context, _NODES.c.uuid == uuid)
        if not rows:
            raise exception.ComputeNodeNotFound(node=uuid)
        return cls.from_row(rows[0])

    @classmethod
    def get_by_host_and_node(cls, context, host, node):
        rows = _get_where(context, sa.and_(
            _NODES.c.host == host, _NODES.c.hypervisor_hostname == node))
        if not rows:
            raise exception.ComputeNodeNotFound(node=f'{node} on host {host}')
        return cls.from_row(rows[0])

    @classmethod
    def get_all(cls, context):
        """Every node of the cell, by host and node name."""
        return [cls.from_row(row) for row in _get_where(context, sa.true())]

    @classmethod
    def get_unmapped(cls, context):
        """The nodes whose host discover_hosts has not mapped yet."""
        return [cls.from_row(row) for row in
                _get_where(context, _NODES.c.mapped == sa.false())]

    @classmethod
    def count(cls, context):
        return _count(context)

    def update(self, context, **values):
        """Change capacity, ratios or ``mapped``."""
        _check_fields(values, UPDATABLE_FIELDS)
        row = _update(context, self.id, values)
        if row is None:
            raise exception.ComputeNodeNotFound(node=self.uuid)
        self.load_row(row)

    def mark_mapped(self, context):
        """Record that the node's host has a host mapping now."""
        self.update(context, mapped=True)

    def destroy(self, context):
        if not _destroy(context, self.id):
            raise exception.ComputeNodeNotFound(node=self.uuid)
