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


def _action_row(context, instance_uuid, request_id):
    """The (latest) action of a request, or InstanceActionNotFound."""
    row = context.session.execute(
        sa.select(_ACTIONS).where(
            _ACTIONS.c.instance_uuid == instance_uuid,
            _ACTIONS.c.request_id == request_id).order_by(
            _ACTIONS.c.id.desc()).limit(1)).first()
    if row is None:
        raise exception.InstanceActionNotFound(action=request_id,
                                               uuid=instance_uuid)
    return row


@cell_db.writer
def _start_action(context, values):
    return rows.insert(context.session, _ACTIONS, values)


@cell_db.reader
def _get_action(context, instance_uuid, request_id):
    return _action_row(context, instance_uuid, request_id)


@cell_db.reader
def _get_actions(context, instance_uuid):
    return context.session.execute(
        sa.select(_ACTIONS).where(
            _ACTIONS.c.instance_uuid == instance_uuid).order_by(
            _ACTIONS.c.id.desc())).all()


@cell_db.writer
def _finish_action(context, action_id, values):
    where = _ACTIONS.c.id == action_id
    written = rows.update(context.session, _ACTIONS, where, values, where)
    return written[0] if written else None


@cell_db.writer
def _start_event(context, instance_uuid, request_id, values):
    action = _action_row(context, instance_uuid, request_id)
    return rows.insert(context.session, _EVENTS,
                       dict(values, action_id=action.id))


@cell_db.writer
def _finish_event(context, instance_uuid, request_id, event, values):
    action = _action_row(context, instance_uuid, request_id)
    row = context.session.execute(
        sa.select(_EVENTS.c.id).where(
            _EVENTS.c.action_id == action.id,
            _EVENTS.c.event == event).order_by(
            _EVENTS.c.id.desc()).limit(1)).first()
    if row is None:
        raise exception.InstanceActionEventNotFound(
            event=event, action=request_id, uuid=instance_uuid)
    return _finish_event_by_id(context, row.id, action.id, values)


@cell_db.writer
def _finish_event_by_id(context, event_id, action_id, values):
    """The event's end; an Error result marks its action 'Error' too."""
    where = _EVENTS.c.id == event_id
    written = rows.update(context.session, _EVENTS, where, values, where)
    if values['result'] == RESULT_ERROR:
        # The action failed as a whole when one of its steps did.
        context.session.execute(
            sa.update(_ACTIONS).where(_ACTIONS.c.id == action_id).values(
                message=RESULT_ERROR))
    return written[0] if written else None


@cell_db.reader
def _get_events(context, action_id):
    return context.session.execute(
        sa.select(_EVENTS).where(_EVENTS.c.action_id == action_id).order_by(
            _EVENTS.c.id)).all()


class InstanceAction(base.DomainObject):
    """One request's action on an instance."""

    FIELDS = ('id', 'action', 'instance_uuid', 'request_id', 'user_id',
              'project_id', 'start_time', 'finish_time', 'message')

    @classmethod
    def start(cls, context, instance_uuid, action, request_id, user_id=None,
              project_id=None):
        """Record that ``request_id`` started ``action`` on the instance."""
        values = {'instance_uuid': instance_uuid, 'action': action,
                  'request_id': request_id, 'user_id': user_id,
                  'project_id': project_id, 'start_time': timeutils.utcnow()}
        return cls.from_row(_start_action(context, values))

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
        row = _finish_action(context, self.id, values)
        if row is None:
            raise exception.InstanceActionNotFound(action=self.request_id,
                                                   uuid=self.instance_uuid)
        self.load_row(row)


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
        return cls.from_row(_finish_event(
            context, instance_uuid, request_id, event,
            _end(result, traceback, details)))

    def finish(self, context, result, traceback=None, details=None):
        """``event_finish`` of this very event, which its starter holds.

        One statement fewer than looking the latest event up again: a
        compute host ends the event it started for the build. Raises
        InstanceActionEventGone if the event is no more.
        """
        row = _finish_event_by_id(context, self.id, self.action_id,
                                  _end(result, traceback, details))
        if row is None:
            raise exception.InstanceActionEventGone(event=self.event,
                                                    event_id=self.id)
        self.load_row(row)

    @classmethod
    def get_by_action(cls, context, action_id):
        """The action's events in the order they started."""
        return [cls.from_row(row) for row in _get_events(context, action_id)]
