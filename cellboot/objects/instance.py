"""Instances: the servers of a cell, in that cell's database.

The boot flow creates the row in the chosen cell (or in cell0 when the
build failed before a cell was known); the compute host moves it to
ACTIVE or ERROR. Several actors race on one instance (a compute host
finishing a build, the owner deleting it, a reschedule), so ``update``
can be made conditional on the vm_state the caller last saw: the change
is written only if nobody moved the instance on in the meantime.
Deleting is a soft delete: the row stays, ``deleted`` set, so that the
owner can still be told what happened.

Messages can arrive twice (a redelivery, a resumed flow replaying its
cast), so a compute host takes a build with ``claim_build``: only one
message moves a building instance to task_state spawning on a host, and
only that build is made ACTIVE (``finish_build``). A build that no host
finishes is found by ``get_builds_older_than`` and ended by
``time_out_build``; one whose boot flow ended before a host took it by
``fail_untaken_build``; one its host was spawning when it restarted by
``fail_interrupted_build``. Each is conditional again, so that of two
conductors sweeping at once, or of a sweeper and a late compute host,
only one acts. The SQL they are written with (columns, the conditions
that select a build, the one conditional update) is
``cellboot.objects.instance_table``.
"""

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot import exception
from cellboot.objects import base
from cellboot.objects import build_args
from cellboot.objects import instance_table as table

_INSTANCES = table.INSTANCES
vm_states = table.vm_states
task_states = table.task_states


class Instance(base.DomainObject):
    """A server in a cell."""

    FIELDS = ('id', 'uuid', 'project_id', 'user_id', 'display_name',
              'reservation_id', 'vm_state', 'task_state', 'host', 'node',
              'flavor', 'image_ref', 'availability_zone', 'metadata',
              'launched_at', 'created_at', 'updated_at', 'deleted',
              'deleted_at')

    # Not fields (``to_dict`` leaves them out of every payload): what
    # the build was last cast with (``build_args.read``: a dict, or None
    # when there is none or it cannot be read) and how often it was
    # re-sent to its host.
    build_args = None
    build_recasts = 0

    @classmethod
    def _from_row(cls, row):
        return cls.from_row(row, **table.from_db(row))

    def load_row(self, row, prefix='', **extra):
        super().load_row(row, prefix, **extra)
        values = row._mapping
        if prefix + 'build_args' in values:
            self.build_args = build_args.read(values[prefix + 'build_args'])
        if prefix + 'build_recasts' in values:
            self.build_recasts = values[prefix + 'build_recasts'] or 0

    @classmethod
    def create(cls, context, uuid, project_id, vm_state, user_id=None,
               **fields):
        """Create the instance row; a taken uuid raises InstanceExists.

        ``fields`` are any of display_name, reservation_id, task_state,
        host, node, flavor (dict), image_ref, availability_zone,
        metadata (dict), launched_at, build_args (``build_args.make``).
        """
        values = _new_row(uuid, project_id, vm_state, user_id, fields)
        try:
            return cls._from_row(table.create(context, values))
        except db_exc.DBDuplicateEntry as exc:
            raise exception.InstanceExists(uuid=uuid) from exc

    @classmethod
    def create_many(cls, context, instances):
        """Create instance rows in one statement (a multi-create's).

        ``instances``: dicts of ``create``'s arguments (``uuid``,
        ``project_id``, ``vm_state``, ``user_id``, and its fields). The
        rows are not read back. A taken uuid raises DBDuplicateEntry
        and writes none of them (the caller's transaction rolls back).
        """
        table.create_many(context, [
            _new_row(fields.pop('uuid'), fields.pop('project_id'),
                     fields.pop('vm_state'), fields.pop('user_id', None),
                     fields)
            for fields in (dict(instance) for instance in instances)])

    @classmethod
    def existing_uuids(cls, context, uuids):
        """Those of ``uuids`` with an instance here, deleted or not."""
        return table.existing_uuids(context, list(uuids))

    @classmethod
    def get_by_uuid(cls, context, uuid, read_deleted=False):
        """The instance; a deleted one only when ``read_deleted``."""
        where = ((_INSTANCES.c.uuid == uuid) if read_deleted
                 else table.live(uuid))
        rows = table.get_where(context, where)
        if not rows:
            raise exception.InstanceNotFound(uuid=uuid)
        return cls._from_row(rows[0])

    @classmethod
    def end_scheduling(cls, context, uuids):
        """Hand building instances over to their hosts, before the cast.

        Those of ``uuids`` that are still scheduling (created by a boot
        flow that has not cast them yet) become untaken, for their host
        to take (``claim_build``) and, if the cast is lost, for the cell
        conductors to send again. One statement for them all.
        """
        table.end_scheduling(context, list(uuids))

    @classmethod
    def get_deleted_uuids(cls, context):
        """The uuids of this cell's soft-deleted instances."""
        return table.deleted_uuids(context)

    @classmethod
    def get_all_by_project(cls, context, project_id):
        """The project's live instances in this cell, oldest first."""
        return [cls._from_row(row) for row in table.get_where(context, sa.and_(
            _INSTANCES.c.project_id == project_id,
            _INSTANCES.c.deleted == sa.false()))]

    @classmethod
    def get_by_uuids(cls, context, uuids, where=None):
        """The live instances of ``uuids`` in this cell, oldest first.

        ``where``, a clause over the instances table, narrows them in
        the query itself (a listing's filters).
        """
        if not uuids:
            return []
        return [cls._from_row(row) for row in table.get_where(context, sa.and_(
            _INSTANCES.c.uuid.in_(list(uuids)),
            _INSTANCES.c.deleted == sa.false(),
            sa.true() if where is None else where))]

    @classmethod
    def get_sorted_page(cls, context, where, value, descending, after,
                        limit):
        """A page of a list sorted across cells (``table.sorted_page``);
        ``where`` says whether deleted instances are in it."""
        return [cls._from_row(row) for row in table.sorted_page(
            context, where, value, descending, after, limit)]

    @classmethod
    def get_spawning_on_host(cls, context, host):
        """The builds ``host`` has taken and not finished, oldest first."""
        return [cls._from_row(row)
                for row in table.get_where(context, table.spawning_on(host))]

    @classmethod
    def get_builds_older_than(cls, context, cutoff):
        """Live instances building, unchanged since ``cutoff``.

        ``cutoff`` is a naive UTC datetime. Oldest first.
        """
        return [cls._from_row(row)
                for row in table.get_where(
                    context, table.build_older_than(cutoff))]

    @classmethod
    def count(cls, context, include_deleted=False):
        where = (sa.true() if include_deleted
                 else _INSTANCES.c.deleted == sa.false())
        return table.count(context, where)

    def update(self, context, expected_vm_state=None, **values):
        """Write ``values``; with ``expected_vm_state``, only from it.

        ``expected_vm_state`` is a vm_state or a list of them; when the
        instance is in none of them any more, nothing is written and
        UnexpectedVMState says what it is in now. A deleted instance
        raises InstanceNotFound.
        """
        expected = expected_vm_state
        if isinstance(expected, str):
            expected = [expected]
        self._written(table.update(context, self.uuid, table.to_db(values),
                                   expected),
                      lambda row: row.vm_state, ' or '.join(expected or []))

    def _written(self, outcome, describe, expected):
        """Load what ``table.update`` wrote, or raise why it wrote nothing.

        ``describe(row)`` says what the instance is now, for
        UnexpectedVMState; a deleted instance raises InstanceNotFound.
        """
        updated, current = outcome
        if updated is not None:
            self.load_row(updated, **table.from_db(updated))
        elif current is None:
            raise exception.InstanceNotFound(uuid=self.uuid)
        else:
            raise exception.UnexpectedVMState(
                uuid=self.uuid, actual=describe(current), expected=expected)

    def claim_build(self, context, host, node=None):
        """Take this build for ``host``; True if this call took it.

        Only a building instance that no host is spawning yet
        (task_state NULL), meant for ``host`` or for no host, is taken:
        task_state becomes spawning and host (and ``node``) are set. When
        it is not taken, the instance's current fields are loaded, for
        the caller to tell a duplicate message from a stale one; a
        deleted instance raises InstanceNotFound.
        """
        values = {'task_state': task_states.SPAWNING, 'host': host}
        if node is not None:
            values['node'] = node
        condition = sa.and_(
            _INSTANCES.c.task_state.is_(None),
            sa.or_(_INSTANCES.c.host.is_(None), _INSTANCES.c.host == host))
        updated, current = table.update(context, self.uuid, values,
                                        [vm_states.BUILDING], condition)
        if updated is None and current is None:
            raise exception.InstanceNotFound(uuid=self.uuid)
        row = updated if updated is not None else current
        self.load_row(row, **table.from_db(row))
        return updated is not None

    def finish_build(self, context, host, **values):
        """Write ``values`` if the build is still the one ``host`` took.

        That is: building, on ``host``, spawning (see ``claim_build``).
        A build that was timed out, deleted, or moved on to another host
        meanwhile (a reschedule) is not written: InstanceNotFound or
        UnexpectedVMState says what it is now.
        """
        condition = sa.and_(
            _INSTANCES.c.host == host,
            _INSTANCES.c.task_state == task_states.SPAWNING)
        self._written(
            table.update(context, self.uuid, table.to_db(values),
                         [vm_states.BUILDING], condition),
            lambda row: f'{row.vm_state} ({row.task_state}) on host '
                        f'{row.host}',
            f'{vm_states.BUILDING} ({task_states.SPAWNING}) on host {host}')

    def time_out_build(self, context, cutoff):
        """ERROR if still building, unchanged since ``cutoff``; True if so.

        The condition is the one ``get_builds_older_than`` selected on,
        checked again in the update: a host that finished the build, a
        reschedule that moved it, or another conductor that timed it out
        first makes this a no-op (False).
        """
        return self._error_if(context, table.build_older_than(cutoff))

    def fail_untaken_build(self, context, cutoff):
        """ERROR if building, untaken, unchanged since ``cutoff``.

        For a build whose boot flow has ended: no cast will come for it
        any more, and no host took it (task_state NULL, or scheduling:
        never cast). True if this call set it; a host that takes it
        meanwhile makes this a no-op.
        """
        return self._error_if(
            context, table.untaken_build_older_than(cutoff, unsent=True))

    def fail_abandoned_build(self, context, cutoff):
        """ERROR if no host builds it and it is unchanged since
        ``cutoff`` (``table.unbuilt_older_than``); True if this call did.
        """
        return self._error_if(context, table.unbuilt_older_than(cutoff))

    def fail_interrupted_build(self, context, host):
        """ERROR if ``host`` took the build and has not finished it.

        For a compute host that restarts: whatever it was spawning died
        with it. True if this call set it.
        """
        return self._error_if(context, table.spawning_on(host))

    def recast_build(self, context, cutoff):
        """Count one re-send of the build to its host; True if this did.

        Only a build still untaken on ``self.host`` and unchanged since
        ``cutoff`` (what the caller selected) is counted, which also
        restarts its clock: of two conductors sweeping at once one
        re-sends it, and a host that took it meanwhile makes this a
        no-op (False).
        """
        return self._set_if(
            context, table.untaken_on(self.host, cutoff),
            {'build_recasts': _INSTANCES.c.build_recasts + 1})

    def start_reschedule(self, context, cutoff):
        """Take an untaken build off its host; True if this call did.

        The same condition as ``recast_build``, or one already being
        taken off (a reschedule to try again); task_state becomes (or
        stays) rescheduling, so that the host can no longer take it
        (``claim_build`` wants none) and its claim there can be given
        back, until ``move_build`` puts it on an alternate. The write
        restarts its clock, so two sweeps never both act.
        """
        return self._set_if(
            context, table.untaken_on(self.host, cutoff, moving=True),
            {'task_state': task_states.RESCHEDULING,
             'updated_at': timeutils.utcnow()})

    def move_build(self, context, host, node, args, fence=None):
        """Put the build on alternate ``host``, to be cast ``args``.

        Only a build that no host is spawning (task_state NULL, as a
        failed host leaves it, or rescheduling) is moved: a host that
        took it meanwhile keeps it. Raises InstanceNotFound or
        UnexpectedVMState when nothing was written. ``fence``: the
        reschedule flow's run, whose flow is in this cell's database:
        the move commits only while that run owns it (``table.update``).
        """
        condition = sa.or_(
            _INSTANCES.c.task_state.is_(None),
            _INSTANCES.c.task_state == task_states.RESCHEDULING)
        values = table.to_db({'host': host, 'node': node, 'task_state': None,
                              'build_args': args})
        values['build_recasts'] = 0
        self._written(
            table.update(context, self.uuid, values, [vm_states.BUILDING],
                         condition, fence=fence),
            lambda row: f'{row.vm_state} ({row.task_state})',
            f'{vm_states.BUILDING} (not taken by a host)')

    def hand_back(self, context, fence=None):
        """Mark a build its cell cannot place as handed back.

        Only a build that no host is spawning (as ``move_build``) is
        marked: task_state becomes handed-back, and from then on the
        super conductors own it (``cellboot.builds.handback``). Raises
        InstanceNotFound or UnexpectedVMState when nothing was written.
        """
        condition = sa.or_(
            _INSTANCES.c.task_state.is_(None),
            _INSTANCES.c.task_state == task_states.RESCHEDULING,
            _INSTANCES.c.task_state == task_states.HANDED_BACK)
        self._written(
            table.update(context, self.uuid,
                         {'task_state': task_states.HANDED_BACK,
                          'updated_at': timeutils.utcnow()},
                         [vm_states.BUILDING], condition, fence=fence),
            lambda row: f'{row.vm_state} ({row.task_state})',
            f'{vm_states.BUILDING} (not taken by a host)')

    @property
    def handed_back(self):
        """Whether this is a live build its cell handed back."""
        return (not self.deleted and
                self.vm_state == vm_states.BUILDING and
                self.task_state == task_states.HANDED_BACK)

    @classmethod
    def get_handed_back(cls, context):
        """The live builds of the targeted cell that it handed back."""
        return [cls._from_row(row) for row in table.get_where(
            context, sa.and_(
                _INSTANCES.c.deleted == sa.false(),
                _INSTANCES.c.vm_state == vm_states.BUILDING,
                _INSTANCES.c.task_state == task_states.HANDED_BACK))]

    def _set_if(self, context, condition, values):
        """Write ``values`` if the live instance matches ``condition``."""
        updated, _current = table.update(context, self.uuid, values,
                                         condition=condition)
        if updated is None:
            return False
        self.load_row(updated, **table.from_db(updated))
        return True

    def _error_if(self, context, condition):
        """ERROR (no task) if the live instance matches ``condition``."""
        return self._set_if(context, condition,
                            {'vm_state': vm_states.ERROR, 'task_state': None})

    def destroy(self, context):
        """Soft-delete: keep the row, marked deleted, vm_state DELETED."""
        values = {'deleted': True, 'deleted_at': timeutils.utcnow(),
                  'vm_state': vm_states.DELETED, 'task_state': None}
        updated, _current = table.update(context, self.uuid, values)
        if updated is None:
            raise exception.InstanceNotFound(uuid=self.uuid)
        self.load_row(updated, **table.from_db(updated))


def _new_row(uuid, project_id, vm_state, user_id, fields):
    """The values of a new instance row (see ``Instance.create``)."""
    values = table.to_db(fields)
    values.update(uuid=uuid, project_id=project_id, user_id=user_id,
                  vm_state=vm_state, deleted=False)
    values.setdefault('metadata', jsonutils.dumps({}))
    return values
