"""Instance actions and their events: an instance's history.

An action is one request acting on an instance ("create", "delete"),
keyed by the request id; its events are the steps services took for it
(``schedule``, ``build_and_run_instance``, ...), each with a start, a
finish and a result. Operators read them to see where a boot went, and
which step failed, without reading service logs.
"""

from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot.db.cell import connection as cell_db
from cellboot.db.cell import models
from cellboot.db import rows
from cellboot import exception
from cellboot.objects import base

_ACTIONS = models.InstanceAction.__table__
_EVENTS = models.InstanceActionEvent.__table__

RESULT_SUCCESS = 'Success'
RESULT_ERROR = 'Error'


def _action_id(context, instance_uuid, request_id):
    """The id of the (latest) action of a request, or ActionNotFound."""
    action_id = context.session.execute(
        sa.select(_ACTIONS.c.id).where(
            _ACTIONS.c.instance_uuid == instance_uuid,
            _ACTIONS.c.request_id == request_id).order_by(
            _ACTIONS.c.id.desc()).limit(1)).scalar()
    if action_id is None:
        raise exception.InstanceActionNotFound(action=request_id,
                                               uuid=instance_uuid)
    return action_id


def _update_by_id(context, table, row_id, values):
    """True if the row with ``row_id`` was there to be updated.

    The row is not read back: the caller's object takes the values it
    wrote (a database may keep its times at a coarser precision, as
    MariaDB's DATETIME does). A compute host ends two history rows per
    build with the write lock of its cell database held.
    """
    return bool(context.session.execute(
        sa.update(table).where(table.c.id == row_id).values(
            **values)).rowcount)


def _new_action(instance_uuid, action, request_id, user_id=None,
                project_id=None):
    return {'instance_uuid': instance_uuid, 'action': action,
            'request_id': request_id, 'user_id': user_id,
            'project_id': project_id, 'start_time': timeutils.utcnow()}


@cell_db.writer
def _start_action(context, values):
    return rows.insert(context.session, _ACTIONS, values)


@cell_db.writer
def _start_actions(context, values_list):
    rows.insert_many(context.session, _ACTIONS, values_list)


@cell_db.reader
def _get_action(context, instance_uuid, request_id):
    return context.session.execute(
        sa.select(_ACTIONS).where(
            _ACTIONS.c.id == _action_id(context, instance_uuid,
                                        request_id))).one()


@cell_db.reader
def _get_actions(context, instance_uuid):
    return context.session.execute(
        sa.select(_ACTIONS).where(
            _ACTIONS.c.instance_uuid == instance_uuid).order_by(
            _ACTIONS.c.id.desc())).all()


@cell_db.writer
def _finish_action(context, action_id, values):
    return _update_by_id(context, _ACTIONS, action_id, values)


@cell_db.writer
def _start_event(context, instance_uuid, request_id, values):
    return rows.insert(context.session, _EVENTS, dict(
        values, action_id=_action_id(context, instance_uuid, request_id)))


@cell_db.writer
def _finish_event(context, instance_uuid, request_id, event, values):
    """The latest ``event`` of the request's action, ended; its values."""
    action_id = _action_id(context, instance_uuid, request_id)
    row = context.session.execute(
        sa.select(_EVENTS).where(
            _EVENTS.c.action_id == action_id,
            _EVENTS.c.event == event).order_by(
            _EVENTS.c.id.desc()).limit(1)).first()
    if row is None:
        raise exception.InstanceActionEventNotFound(
            event=event, action=request_id, uuid=instance_uuid)
    _finish_event_by_id(context, row.id, action_id, values)
    return dict(row._mapping, **values)


@cell_db.writer
def _finish_event_by_id(context, event_id, action_id, values):
    """End an event; an Error result marks its action 'Error' too.

    True if the event was there to be ended.
    """
    found = _update_by_id(context, _EVENTS, event_id, values)
    if found and values['result'] == RESULT_ERROR:
        # The action failed as a whole when one of its steps did.
        _update_by_id(context, _ACTIONS, action_id,
                      {'message': RESULT_ERROR})
    return found


@cell_db.reader
def _get_events(context, action_id):
    return context.session.execute(
        sa.select(_EVENTS).where(_EVENTS.c.action_id == action_id).order_by(
            _EVENTS.c.id)).all()


class InstanceAction(base.DomainObject):
    """One request's action on an instance."""

    FIELDS = ('id', 'action', 'instance_uuid', 'request_id', 'user_id',
              'project_id', 'start_time', 'finish_time', 'message',
              'updated_at')

    @classmethod
    def start(cls, context, instance_uuid, action, request_id, user_id=None,
              project_id=None):
        """Record that ``request_id`` started ``action`` on the instance."""
        return cls.from_row(_start_action(context, _new_action(
            instance_uuid, action, request_id, user_id, project_id)))

    @classmethod
    def start_many(cls, context, starts):
        """``start`` for each of ``starts`` (dicts of its arguments), in
        one statement; the rows are not read back."""
        _start_actions(context, [_new_action(**start) for start in starts])

    @classmethod
    def get_by_request_id(cls, context, instance_uuid, request_id):
        return cls.from_row(_get_action(context, instance_uuid, request_id))

    @classmethod
    def get_by_instance_uuid(cls, context, instance_uuid):
        """The instance's actions, newest first."""
        return [cls.from_row(row)
                for row in _get_actions(context, instance_uuid)]

    def finish(self, context, message=None):
        """Record the end of the action (``message``: e.g. 'Error')."""
        values = {'finish_time': timeutils.utcnow()}
        if message is not None:
            values['message'] = message
        if not _finish_action(context, self.id, values):
            raise exception.InstanceActionNotFound(action=self.request_id,
                                                   uuid=self.instance_uuid)
        for name, value in values.items():
            setattr(self, name, value)


def _end(result, traceback, details):
    return {'result': result, 'traceback': traceback, 'details': details,
            'finish_time': timeutils.utcnow()}


class InstanceActionEvent(base.DomainObject):
    """One step of an action, with its result and failure, if any."""

    FIELDS = ('id', 'action_id', 'event', 'result', 'traceback', 'details',
              'host', 'start_time', 'finish_time')

    @classmethod
    def event_start(cls, context, instance_uuid, request_id, event,
                    host=None):
        """Record the start of ``event`` of the request's action.

        InstanceActionNotFound when the action was never started.
        """
        values = {'event': event, 'host': host,
                  'start_time': timeutils.utcnow()}
        return cls.from_row(
            _start_event(context, instance_uuid, request_id, values))

    @classmethod
    def event_finish(cls, context, instance_uuid, request_id, event, result,
                     traceback=None, details=None):
        """Record the end of the latest ``event``; result Success/Error.

        An Error result also marks the whole action 'Error'.
        """
        row = _finish_event(context, instance_uuid, request_id, event,
                            _end(result, traceback, details))
        return cls(**{name: row[name] for name in cls.FIELDS})

    def finish(self, context, result, traceback=None, details=None):
        """``event_finish`` of this very event, which its starter holds.

        One statement fewer than looking the latest event up again: a
        compute host ends the event it started for the build. Raises
        InstanceActionEventGone if the event is no more.
        """
        values = _end(result, traceback, details)
        if not _finish_event_by_id(context, self.id, self.action_id, values):
            raise exception.InstanceActionEventGone(event=self.event,
                                                    event_id=self.id)
        for name, value in values.items():
            setattr(self, name, value)

    @classmethod
    def get_by_action(cls, context, action_id):
        """The action's events in the order they started."""
        return [cls.from_row(row) for row in _get_events(context, action_id)]
