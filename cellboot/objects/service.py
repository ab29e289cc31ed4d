"""Services: the processes of a cell and whether they are alive.

Each compute host and cell conductor has one row in its cell's database
and heartbeats into it (``report_up``); the scheduler's ComputeFilter
reads ``is_up`` to skip hosts whose agent has gone quiet.
"""

import datetime

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models
from cellboot import exception
from cellboot.objects import base

_SERVICES = models.Service.__table__

UPDATABLE_FIELDS = frozenset({'disabled', 'disabled_reason'})


def _get(context, where):
    query = sa.select(_SERVICES).where(where).order_by(_SERVICES.c.host,
                                                       _SERVICES.c.binary)
    return context.session.execute(query).all()


@cell_db.writer
def _create(context, values):
    result = context.session.execute(sa.insert(_SERVICES).values(**values))
    return _get(context, _SERVICES.c.id == result.inserted_primary_key[0])[0]


@cell_db.reader
def _get_where(context, where):
    return _get(context, where)


@cell_db.writer
def _update(context, service_id, values):
    where = _SERVICES.c.id == service_id
    if not context.session.execute(
            sa.update(_SERVICES).where(where).values(**values)).rowcount:
        return None
    return _get(context, where)[0]


@cell_db.writer
def _destroy(context, service_id):
    return context.session.execute(
        sa.delete(_SERVICES).where(_SERVICES.c.id == service_id)).rowcount


class Service(base.DomainObject):
    """A service (``binary``) running on ``host``."""

    FIELDS = ('id', 'host', 'binary', 'disabled', 'disabled_reason',
              'last_seen_up', 'report_count')

    @classmethod
    def create(cls, context, host, binary):
        """Register a service; a second one on the host raises Exists."""
        values = {'host': host, 'binary': binary, 'disabled': False,
                  'report_count': 0}
        try:
            return cls.from_row(_create(context, values))
        except db_exc.DBDuplicateEntry as exc:
            raise exception.ServiceExists(host=host, binary=binary) from exc

    @classmethod
    def get_by_host_and_binary(cls, context, host, binary):
        rows = _get_where(context, sa.and_(_SERVICES.c.host == host,
                                           _SERVICES.c.binary == binary))
        if not rows:
            raise exception.ServiceNotFound(host=host, binary=binary)
        return cls.from_row(rows[0])

    @classmethod
    def get_all(cls, context, binary=None):
        """The cell's services (only ``binary`` ones if given), by host."""
        where = sa.true() if binary is None else _SERVICES.c.binary == binary
        return [cls.from_row(row) for row in _get_where(context, where)]

    def _save(self, context, values):
        row = _update(context, self.id, values)
        if row is None:
            raise exception.ServiceNotFound(host=self.host,
                                            binary=self.binary)
        self.load_row(row)

    def report_up(self, context):
        """Heartbeat: the service is alive now."""
        self._save(context, {
            'last_seen_up': timeutils.utcnow(),
            'report_count': _SERVICES.c.report_count + 1})

    def update(self, context, **values):
        """Enable/disable the service (``disabled``, ``disabled_reason``)."""
        unknown = set(values) - UPDATABLE_FIELDS
        if unknown:
            raise exception.Invalid(
                reason=f'services have no updatable field(s) '
                       f'{", ".join(sorted(unknown))}')
        self._save(context, values)

    def destroy(self, context):
        if not _destroy(context, self.id):
            raise exception.ServiceNotFound(host=self.host,
                                            binary=self.binary)

    def is_up(self, down_time_seconds):
        """True if the last heartbeat is at most ``down_time_seconds`` old."""
        if self.last_seen_up is None:
            return False
        age = timeutils.utcnow() - self.last_seen_up
        return age <= datetime.timedelta(seconds=down_time_seconds)
