"""Accepting a boot: every row of every instance in one transaction.

``POST /servers`` writes, per instance, a build request, a request spec
and an instance mapping with no cell, plus the server group membership
when the request names a group, all in one API-database transaction:
either the whole request is accepted or nothing is written. The cast to
the super conductor comes after the commit; the rows are the source of
truth (docs/rpc.md), so a cast that fails leaves an accepted request for
the sweeper to start.

``describe`` then ``persist`` are the whole write: the REST handler
calls them, and so do the functional tests and the end-to-end benchmark
when they boot without HTTP, so that what they exercise is what the API
writes.

The project's quota is checked first in that same transaction, with the
project's lock row held (``cellboot.quota.claim``): concurrent boots of
one project count and write one after the other, so together they never
exceed it, and a boot over quota writes nothing.

A COMMIT whose answer was lost (the database restarted under it) may
have committed: the client, told 503, would send the request again and
get a second server. ``persist`` finds out instead, once the database
answers again, whether the rows are there, and accepts the request when
they are (``cellboot.db.outage.ride_out``).
"""

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import uuidutils

from cellboot.api import errors
from cellboot.builds import accepted
from cellboot.conf import CONF
from cellboot.db.api import connection as api_db
from cellboot.db import outage
from cellboot import metrics
from cellboot.objects import instance_mapping
from cellboot import quota

LOG = logging.getLogger(__name__)


def new_reservation_id():
    """Nova's shape: ``r-`` and eight characters."""
    return 'r-' + uuidutils.generate_uuid()[:8]


def describe(context, name, flavor, count=1, image_ref=None,
             availability_zone=None, metadata=None, hints=None,
             project_id=None):
    """``(instance, spec)``: what a request for ``count`` servers asks.

    ``instance`` is what its instances share (name, flavor, image, zone,
    metadata and a new reservation id), ``spec`` the request spec the
    scheduler reads; both as ``persist`` takes them. ``flavor`` is the
    flavor's values (``flavorid``, ``name``, ``vcpus``, ``memory_mb``,
    ``root_gb``, ``extra_specs``: ``{key: value}``, which the scheduler
    reads for ``resources:*`` and ``trait:*``); ``project_id`` the
    project that will own the servers (default: the caller's).
    """
    instance = {'display_name': name,
                'reservation_id': new_reservation_id(), 'flavor': flavor,
                'image_ref': image_ref,
                'availability_zone': availability_zone,
                'metadata': metadata or {}}
    spec = {'flavor': flavor, 'num_instances': count,
            'availability_zone': availability_zone,
            'scheduler_hints': dict(hints or {}),
            'project_id': project_id or context.project_id,
            'user_id': context.user_id}
    return instance, spec


def check_size(context, count, instance, spec):
    """413 when ``count`` instances would carry too much to be stored.

    Every instance's build request and request spec travel in one RPC
    message and go, as JSON with non-ASCII characters escaped (6 to 12
    bytes each), into one row of the boot flow's store: a request whose
    body is small can still make them larger than a database statement
    or a message may be (``[api] max_boot_payload_size``). Refused
    whole, before anything is written, rather than accepted and stuck.
    """
    each = accepted.stored_size(uuidutils.generate_uuid(),
                                context.project_id, context.user_id,
                                instance, spec)
    limit = CONF.api.max_boot_payload_size
    if each * count > limit:
        fewer = (f'ask for at most {limit // each} server(s) with this '
                 f'metadata, or send less' if limit >= each else
                 'send less metadata or fewer hints')
        raise errors.HTTPError(
            413, f'{count} server(s) of {each} bytes each (build request '
                 f'and request spec as stored) are over the limit of '
                 f'{limit} bytes per request ([api] '
                 f'max_boot_payload_size): {fewer}.')


def persist(context, count, instance, spec, group=None, min_count=None):
    """Write the rows of up to ``count`` instances; their payloads.

    ``instance`` is the serialized instance shared by all (name, flavor,
    image, metadata, zone, reservation id); ``spec`` the request spec.
    As many instances as the project's quota allows are written, from
    ``min_count`` (default: ``count``) to ``count``; fewer than
    ``min_count`` raises QuotaExceeded and writes nothing. Returns
    ``(build_requests, request_specs)``, the arguments of
    ``schedule_and_build_instances``. The instances accepted count in
    ``cellboot_boots_started``.
    """
    build_requests, specs = _write(context, count, instance, spec, group,
                                   min_count)
    metrics.boots_started(len(build_requests))
    return build_requests, specs


def _write(context, count, instance, spec, group, min_count):
    """``persist``'s rows, once committed (or found committed)."""
    min_count = count if min_count is None else min_count
    uuids = [uuidutils.generate_uuid() for _index in range(count)]
    written = []
    try:
        try:
            return _persist(context, min_count, uuids, instance, spec,
                            group, written)
        except quota.ProjectNotLocked:
            quota.prepare(context, context.project_id)
            return _persist(context, min_count, uuids, instance, spec,
                            group, written)
    except db_exc.DBConnectionError as exc:
        if not written:
            raise       # lost before the COMMIT: nothing was written
        return _committed_or_raise(context, uuids, instance, spec, exc)


def _committed_or_raise(context, uuids, instance, spec, lost):
    """What ``persist`` returned, if its COMMIT got through; else ``lost``.

    Waits for the database as the services that run builds do
    (``[database] outage_retry_seconds``), then reads the instance
    mappings of ``uuids``: the transaction wrote one for each instance it
    accepted, the first ones of ``uuids``, or none at all.
    """
    def found():
        return instance_mapping.InstanceMapping.get_by_instance_uuids(
            context, uuids)

    LOG.warning('The answer to the COMMIT of boot request %s was lost '
                '(%s); finding out whether it committed',
                instance['reservation_id'], outage.brief(lost))
    mappings = outage.ride_out(found, what='accepting boot request %s'
                               % instance['reservation_id'])
    accepted_uuids = [uuid for uuid in uuids if uuid in mappings]
    if not accepted_uuids:
        raise lost
    LOG.info('Boot request %s had committed: %d instance(s) accepted',
             instance['reservation_id'], len(accepted_uuids))
    return ([accepted.payload(uuid, context.project_id, context.user_id,
                              instance) for uuid in accepted_uuids],
            [dict(spec, num_instances=len(accepted_uuids))]
            * len(accepted_uuids))


@api_db.writer
def _persist(context, min_count, uuids, instance, spec, group, written):
    """The transaction of ``persist``: quota first, then the rows.

    Nested writers join this transaction, so a failure of any row rolls
    back all of them. ``written`` gets an entry once every statement ran:
    a lost connection after that may have lost a COMMIT that happened.
    """
    flavor = instance.get('flavor') or {}
    vcpus, memory_mb = flavor.get('vcpus', 0), flavor.get('memory_mb', 0)
    count = quota.claim(context, context.project_id, min_count, len(uuids),
                        vcpus, memory_mb)
    spec = dict(spec, num_instances=count)
    build_requests = accepted.write(
        context, context.project_id, context.user_id,
        [(uuid, instance) for uuid in uuids[:count]], spec, group=group)
    written.append(count)
    return build_requests, [spec] * count
