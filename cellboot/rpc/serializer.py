"""What travels: the request context as a dict, payloads as plain JSON.

Payloads are plain dicts by design (no versionedobjects), so the entity
serializer only makes sure they are JSON on the wire: datetimes become
ISO 8601 strings, sets become lists. The receiving side gets those plain
values back; it never gets an object it did not build itself.
"""

import oslo_messaging
from oslo_serialization import jsonutils

from cellboot import context as cb_context


def _primitive(value):
    return jsonutils.to_primitive(value, convert_instances=True)


class RequestContextSerializer(oslo_messaging.NoOpSerializer):
    """Send ``RequestContext.to_dict()``; rebuild it with ``from_dict``.

    Received contexts may name their user ``user`` (oslo.context) or
    ``user_id``; both are understood.

    The cell targeting of a context stays behind: it holds a database
    engine, and the receiver chooses its own database (its local cell, or
    a cell it targets itself).
    """

    def serialize_entity(self, ctxt, entity):
        """``entity`` as the JSON a broker would carry, decoded again.

        Encoded by the json module's C encoder, which leaves only what
        JSON lacks (datetimes, sets) to ``to_primitive``: walking every
        payload in Python with ``to_primitive`` cost a multi-create of
        500 about a tenth of its time in the build casts. The receiver
        gets what it would get from any real transport (dict keys are
        strings, tuples are lists), also over ``fake://``.
        """
        return jsonutils.loads(jsonutils.dumps(entity, default=_primitive))

    def serialize_context(self, ctxt):
        return ctxt.to_dict()

    def deserialize_context(self, ctxt):
        values = dict(ctxt)
        # oslo.context names the user 'user'; other senders (a nova-api,
        # a hand-written client) may say 'user_id' and 'project'.
        if values.get('user') is None:
            values['user'] = values.get('user_id')
        if values.get('project_id') is None:
            values['project_id'] = values.get('project')
        return cb_context.RequestContext.from_dict(values)
