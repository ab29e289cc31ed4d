"""An instance's history in one cell, carried to the next cell it moves to.

A build moved to another cell (the cross-cell flow) leaves its first
cell: its row goes, and so would what happened to it there (the action
events of its boot and reschedules, its faults). ``read`` takes that
history out as plain JSON-able dicts (the flow persists them), ``remove``
hard-deletes the instance with its actions, events and faults in one
transaction of the old cell, and ``carry`` writes the events, each
named with the cell it happened in, into the create action of the
instance where it is now, once (a replay finds them there). The
instance action API and ``flows show`` then show both cells' events.
"""

from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models

_INSTANCES = models.Instance.__table__
_ACTIONS = models.InstanceAction.__table__
_EVENTS = models.InstanceActionEvent.__table__
_FAULTS = models.InstanceFault.__table__

# Longest text kept of one event's or fault's details.
_DETAILS_WIDTH = 4000
# The most events and faults carried from one cell: the latest ones. The
# history is persisted in the API level's flow and written into the next
# cell, so a cell (compromised, or looping) that wrote thousands of rows
# for the instance cannot grow either beyond this.
MAX_EVENTS = 100
MAX_FAULTS = 20


def _iso(value):
    return value.isoformat() if value is not None else None


def _cut(text):
    return None if text is None else str(text)[:_DETAILS_WIDTH]


@cell_db.reader
def read(context, instance_uuid, cell_name):
    """``{'events': [...], 'faults': [...]}`` of the instance in the
    targeted cell (``cell_name``: what each entry is said to come from),
    oldest first: the latest ``MAX_EVENTS`` and ``MAX_FAULTS``."""
    events = context.session.execute(
        sa.select(_ACTIONS.c.action, _ACTIONS.c.request_id, _EVENTS.c.event,
                  _EVENTS.c.result, _EVENTS.c.details, _EVENTS.c.host,
                  _EVENTS.c.start_time, _EVENTS.c.finish_time).join(
            _EVENTS, _EVENTS.c.action_id == _ACTIONS.c.id).where(
            _ACTIONS.c.instance_uuid == instance_uuid).order_by(
            _EVENTS.c.id.desc()).limit(MAX_EVENTS)).all()[::-1]
    faults = context.session.execute(
        sa.select(_FAULTS).where(
            _FAULTS.c.instance_uuid == instance_uuid).order_by(
            _FAULTS.c.id.desc()).limit(MAX_FAULTS)).all()[::-1]
    return {
        'events': [{'cell': cell_name, 'action': row.action,
                    'request_id': row.request_id, 'event': row.event,
                    'result': row.result, 'details': _cut(row.details),
                    'host': row.host, 'start_time': _iso(row.start_time),
                    'finish_time': _iso(row.finish_time)}
                   for row in events],
        'faults': [{'cell': cell_name, 'code': row.code,
                    'message': row.message, 'details': _cut(row.details),
                    'host': row.host}
                   for row in faults],
    }


@cell_db.writer
def remove(context, instance_uuid):
    """Hard-delete the instance, its actions, events and faults.

    For a build that leaves the targeted cell for another: the history
    was read (``read``) and travels with it. Returns whether a row was
    there.
    """
    actions = sa.select(_ACTIONS.c.id).where(
        _ACTIONS.c.instance_uuid == instance_uuid)
    context.session.execute(sa.delete(_EVENTS).where(
        _EVENTS.c.action_id.in_(actions)))
    context.session.execute(sa.delete(_ACTIONS).where(
        _ACTIONS.c.instance_uuid == instance_uuid))
    context.session.execute(sa.delete(_FAULTS).where(
        _FAULTS.c.instance_uuid == instance_uuid))
    return bool(context.session.execute(sa.delete(_INSTANCES).where(
        _INSTANCES.c.uuid == instance_uuid)).rowcount)


def _parse(value):
    if not value:
        return None
    return timeutils.normalize_time(timeutils.parse_isotime(value))


@cell_db.writer
def carry(context, instance_uuid, history, request_id):
    """Write ``history``'s events into the instance's action of
    ``request_id`` in the targeted cell; how many were written.

    Each event is named ``CELL:EVENT``, so that the action shows where
    it happened. All of one cell's events are written in this one
    transaction, so a cell whose events are there already (a replay) is
    skipped whole. An instance without that action gets none (nothing
    to carry into).
    """
    action_id = context.session.execute(
        sa.select(_ACTIONS.c.id).where(
            _ACTIONS.c.instance_uuid == instance_uuid,
            _ACTIONS.c.request_id == request_id).order_by(
            _ACTIONS.c.id).limit(1)).scalar()
    if action_id is None:
        return 0
    present = {row.event.split(':', 1)[0] for row in context.session.execute(
        sa.select(_EVENTS.c.event).where(
            _EVENTS.c.action_id == action_id)) if ':' in row.event}
    rows = [{'action_id': action_id,
             'event': f'{entry["cell"]}:{entry["event"]}'[:255],
             'result': entry.get('result'), 'details': entry.get('details'),
             'host': entry.get('host'),
             'start_time': _parse(entry.get('start_time')),
             'finish_time': _parse(entry.get('finish_time'))}
            for entry in (history or {}).get('events') or ()
            if entry.get('cell') not in present]
    if rows:
        context.session.execute(sa.insert(_EVENTS), rows)
    return len(rows)
