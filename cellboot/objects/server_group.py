"""Server groups: servers that must share a host, or must not.

A user creates a group with a policy, then boots servers with the
scheduler hint ``group``; the scheduler's affinity filters read the group
and its members to decide where the next member may go. Groups and their
members live in the API database, because membership is known before any
cell is chosen. A server belongs to at most one group.
"""

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.api import connection as api_db
from cellboot.db.api import models
from cellboot.db import pages
from cellboot.db import retry
from cellboot import exception
from cellboot.objects import base

AFFINITY = 'affinity'
ANTI_AFFINITY = 'anti-affinity'
POLICIES = (AFFINITY, ANTI_AFFINITY)
MAX_NAME_LENGTH = 255

_GROUPS = models.ServerGroup.__table__
_MEMBERS = models.ServerGroupMember.__table__


def _members(context, group_ids):
    """``{group_id: [instance_uuid, ...]}`` in the order they joined."""
    members = {group_id: [] for group_id in group_ids}
    if group_ids:
        query = sa.select(_MEMBERS.c.group_id, _MEMBERS.c.instance_uuid
                          ).where(_MEMBERS.c.group_id.in_(group_ids)
                                  ).order_by(_MEMBERS.c.id)
        for group_id, instance_uuid in context.session.execute(query):
            members[group_id].append(instance_uuid)
    return members


def _with_members(context, rows):
    members = _members(context, [row.id for row in rows])
    return [(row, members[row.id]) for row in rows]


def _add(context, group_id, group_uuid, instance_uuids):
    """Add members inside the caller's transaction; return all members."""
    wanted = list(dict.fromkeys(instance_uuids))
    if wanted:
        query = sa.select(_MEMBERS.c.instance_uuid, _GROUPS.c.uuid).join(
            _GROUPS, _GROUPS.c.id == _MEMBERS.c.group_id,
        ).where(_MEMBERS.c.instance_uuid.in_(wanted))
        present = set()
        for instance_uuid, other in context.session.execute(query):
            if other != group_uuid:
                raise exception.Invalid(
                    reason=f'server {instance_uuid} is already a member of '
                           f'server group {other}; a server belongs to at '
                           f'most one group')
            present.add(instance_uuid)
        new = [uuid for uuid in wanted if uuid not in present]
        if new:
            context.session.execute(sa.insert(_MEMBERS), [
                {'group_id': group_id, 'instance_uuid': uuid}
                for uuid in new])
    return _members(context, [group_id])[group_id]


@retry.on_contention
@api_db.writer
def _create(context, values, members):
    result = context.session.execute(sa.insert(_GROUPS).values(**values))
    group_id = result.inserted_primary_key[0]
    row = context.session.execute(
        sa.select(_GROUPS).where(_GROUPS.c.id == group_id)).one()
    return row, _add(context, group_id, row.uuid, members)


# Two requests adding the same server at once: the loser's insert hits
# the unique key and is run again, when it finds the member in place.
@retry.on_duplicate
@retry.on_contention
@api_db.writer
def _add_members(context, group_id, group_uuid, instance_uuids):
    return _add(context, group_id, group_uuid, instance_uuids)


@api_db.reader
def _get(context, where):
    query = sa.select(_GROUPS).where(where).order_by(_GROUPS.c.id)
    return _with_members(context, context.session.execute(query).all())


@api_db.reader
def _get_page(context, project_id, limit, marker):
    of_project = _GROUPS.c.project_id == project_id
    marker_values = None
    if marker is not None:
        # Another project's group is no marker: it is not in the list.
        marker_id = context.session.execute(sa.select(_GROUPS.c.id).where(
            of_project, _GROUPS.c.uuid == marker)).scalar()
        if marker_id is None:
            raise exception.MarkerNotFound(marker=marker)
        marker_values = (marker_id,)
    query = pages.page(sa.select(_GROUPS).where(of_project),
                       (_GROUPS.c.id,), marker_values, limit)
    return _with_members(context, context.session.execute(query).all())


@api_db.reader
def _get_by_instance(context, instance_uuid):
    query = sa.select(_GROUPS).join(
        _MEMBERS, _MEMBERS.c.group_id == _GROUPS.c.id,
    ).where(_MEMBERS.c.instance_uuid == instance_uuid).order_by(_GROUPS.c.id)
    return _with_members(context, context.session.execute(query).all())


@retry.on_contention
@api_db.writer
def _destroy(context, group_id):
    context.session.execute(sa.delete(_MEMBERS).where(
        _MEMBERS.c.group_id == group_id))
    return context.session.execute(sa.delete(_GROUPS).where(
        _GROUPS.c.id == group_id)).rowcount


def _validate(name, project_id, policy):
    if policy not in POLICIES:
        raise exception.Invalid(
            reason=f'server group policy must be one of '
                   f'{", ".join(POLICIES)}, not {policy!r}')
    if (not isinstance(name, str) or not name.strip()
            or len(name) > MAX_NAME_LENGTH):
        raise exception.Invalid(
            reason=f'server group name must be 1 to {MAX_NAME_LENGTH} '
                   f'characters, not {name!r}')
    if not project_id:
        raise exception.Invalid(reason='a server group needs a project')


class ServerGroup(base.DomainObject):
    """A named group of servers with an affinity or anti-affinity policy."""

    FIELDS = ('id', 'uuid', 'name', 'project_id', 'user_id', 'policy',
              'members', 'created_at', 'updated_at')

    @classmethod
    def _from(cls, row_and_members):
        row, members = row_and_members
        return cls.from_row(row, members=members)

    @classmethod
    def create(cls, context, name, project_id, policy, user_id=None,
               uuid=None, members=()):
        """Create a group, optionally with members.

        Raises Invalid for an unknown policy, a bad name or a member that
        is already in another group, and ServerGroupExists for a taken
        uuid.
        """
        _validate(name, project_id, policy)
        values = {'uuid': uuid or uuidutils.generate_uuid(), 'name': name,
                  'project_id': project_id, 'user_id': user_id,
                  'policy': policy}
        try:
            return cls._from(_create(context, values, list(members)))
        except db_exc.DBDuplicateEntry as exc:
            raise exception.ServerGroupExists(uuid=values['uuid']) from exc

    @classmethod
    def get_by_uuid(cls, context, uuid):
        found = _get(context, _GROUPS.c.uuid == uuid)
        if not found:
            raise exception.ServerGroupNotFound(group=uuid)
        return cls._from(found[0])

    @classmethod
    def get_page(cls, context, project_id, limit, marker=None):
        """Up to ``limit`` of the project's groups, oldest first.

        ``marker`` is the uuid of the last group of the previous page;
        one the project does not have raises MarkerNotFound.
        """
        return [cls._from(found) for found in
                _get_page(context, project_id, limit, marker)]

    @classmethod
    def get_by_instance_uuid(cls, context, instance_uuid):
        """The group a server belongs to (ServerGroupNotFound if none)."""
        found = _get_by_instance(context, instance_uuid)
        if not found:
            raise exception.ServerGroupNotFound(
                group=f'of server {instance_uuid}')
        return cls._from(found[0])

    def add_members(self, context, instance_uuids):
        """Add servers to the group; adding a member again is harmless.

        Raises Invalid, adding none of them, when one already belongs to
        another group. Refreshes ``members``.
        """
        self.members = _add_members(context, self.id, self.uuid,
                                    list(instance_uuids))

    def destroy(self, context):
        """Delete the group and its membership list."""
        if not _destroy(context, self.id):
            raise exception.ServerGroupNotFound(group=self.uuid)
