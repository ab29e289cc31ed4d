"""nova-api's requests whose cast never reached cellboot, built all the same.

nova-api commits a server's build request, request spec and cell-less
mapping, and only then casts. The cast can be lost in between or on its
way: nova-api dies after its commit; the broker restarts and loses
Nova's non-durable queue with the casts in it; no door has declared the
queue yet (RabbitMQ drops what is sent to a queue nobody declared); a
super conductor dies after taking the cast off the queue and before
accepting it. Nova's own conductor leaves such a server in BUILD for
ever. The Nova mirror finds them (a nova-api mapping with a build
request and no cell, that cellboot has never heard of, older than
``[nova] lost_cast_after``) and ``LostCasts.recover`` builds each
request from what nova-api keeps of it: the build requests (the
``Instance``, the block device mappings, the tags) and the request
specs, through the door's own path (``nova_door.build``). So a
recovered request is checked, accepted and started as its cast would
have been, under the same flow key: a cast that was only late finds it
accepted and starts nothing twice.

A request the door refuses (it is not what nova-api sends) cannot be
built; it is not left in BUILD either: each of its servers is shown in
ERROR in nova-api's cell0 (``bury``), with a fault whose details (hidden
from the owner, as a 500's are) say why.

What nova-api does not keep cannot be recovered: it drops the requested
networks from the request spec it stores, so a recovered request is
built as if it asked for none (cellboot manages no networks; a cast
that asked for a port ends in ERROR instead, docs/nova.md).
"""

import collections
import json

from oslo_log import log as logging

from cellboot.conductor import nova_door
from cellboot import context as cb_context
from cellboot.nova import instance_rows
from cellboot.nova import primitives
from cellboot.nova import store

LOG = logging.getLogger(__name__)

ORIGIN = "recovered from nova-api's database (its cast was lost)"

REFUSED = ("its cast never reached cellboot, and the Nova door refused "
           "nova-api's rows of it as not what nova-api sends (the super "
           "conductor's log says where)")


def report_once(reported, uuid, message, *args):
    """Log ``message`` at ERROR unless ``uuid`` is in ``reported``
    already: what cannot be read at one pass cannot at the next."""
    if uuid not in reported:
        reported.add(uuid)
        LOG.error(message, *args)


def _json(text, what):
    """A stored JSON column, bounded; None stays None."""
    if text is None:
        return None
    if len(text) > instance_rows.MAX_STORED:
        raise primitives.Malformed(f'{what}: over '
                                   f'{instance_rows.MAX_STORED} characters')
    try:
        return json.loads(text)
    except ValueError:
        raise primitives.Malformed(f'{what}: not JSON')


def _build_request(row, instance):
    """The ``BuildRequest`` primitive nova-api would have cast."""
    return {'nova_object.name': 'BuildRequest',
            'nova_object.namespace': primitives.NAMESPACE,
            'nova_object.version': '1.3',
            'nova_object.data': {'instance_uuid': row.instance_uuid,
                                 'project_id': row.project_id,
                                 'instance': instance}}


class LostCasts:
    """Builds the requests of lost casts (see the module)."""

    def __init__(self, manager, api, reported):
        self.manager = manager
        self.api = api
        # Uuids already reported as not mirrorable (shared with the
        # mirror): each is logged once.
        self.reported = reported

    def _read(self, uuids):
        """``{reservation: [(row, instance, spec)]}``, in ``uuids``' order."""
        rows = store.requests_of(self.api, uuids)
        requests = collections.defaultdict(list)
        for uuid in uuids:
            row = rows.get(uuid)
            if row is None:
                continue    # deleted by its owner meanwhile
            try:
                instance = instance_rows.read(row.instance)
                spec = _json(row.spec, 'request spec')
            except primitives.Malformed as exc:
                report_once(self.reported, uuid, 'Server %s: its cast was '
                            'lost and nova-api\'s rows of it cannot be '
                            'read; nova-api keeps showing it in BUILD: %s',
                            uuid, exc)
                continue
            reservation = primitives.data(instance)['reservation_id']
            requests[reservation].append((row, instance, spec))
        return requests

    def recover(self, context, uuids, bury, cut=None):
        """Build the requests of ``uuids``; how many instances were taken.

        ``uuids``: lost ones, oldest first. ``bury(uuid, stored instance,
        why)`` shows a server that cannot be built in ERROR in nova-api.
        ``cut``: the last server the pass read when it could not read
        them all; its request may go on past it, and waits for a pass
        that reads it whole.
        """
        taken = 0
        for reservation, members in self._read(uuids).items():
            if any(row.instance_uuid == cut for row, _i, _s in members):
                continue
            first, instance, _spec = members[0]
            fields = primitives.data(instance)
            try:
                args = {
                    'build_requests': [_build_request(row, inst)
                                       for row, inst, _spec in members],
                    'request_specs': [spec for _r, _i, spec in members],
                    'block_device_mapping': _json(
                        first.block_device_mappings,
                        'block device mappings'),
                    'tags': _json(first.tags, 'tags')}
            except primitives.Malformed as exc:
                LOG.error('Reservation %s: its cast was lost and nova-api\'s '
                          'rows of it cannot be read: %s', reservation, exc)
                for row, _instance, _spec in members:
                    bury(row.instance_uuid, row.instance, f'{REFUSED}: {exc}')
                continue
            request = cb_context.RequestContext(
                user_id=fields['user_id'], project_id=fields['project_id'])
            LOG.warning('Reservation %s: nova-api\'s cast of %d instance(s) '
                        'never reached cellboot; building it from nova-api\'s '
                        'database', reservation, len(members))
            if nova_door.build(self.manager, request, args, ORIGIN):
                taken += len(members)
                continue
            for row, _instance, _spec in members:
                bury(row.instance_uuid, row.instance, REFUSED)
        return taken
