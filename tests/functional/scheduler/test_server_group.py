"""ServerGroup against a real API database, on every backend."""

import threading

from oslo_utils import uuidutils

from cellboot import context
from cellboot import exception
from cellboot.objects import server_group
from tests import base
from tests.functional.objects import spec_base

ServerGroup = server_group.ServerGroup


class _ServerGroupTests(spec_base.ObjectTests):

    def make_group(self, name='web', project_id='p1', policy='anti-affinity',
                   **kwargs):
        return ServerGroup.create(self.ctx, name, project_id, policy,
                                  **kwargs)

    def test_create_returns_the_stored_group(self):
        group = self.make_group(user_id='u1')
        self.assertTrue(uuidutils.is_uuid_like(group.uuid))
        self.assertEqual(('web', 'p1', 'u1', 'anti-affinity', []),
                         (group.name, group.project_id, group.user_id,
                          group.policy, group.members))
        self.assertRecent(group.created_at)

    def test_create_with_members_keeps_their_order(self):
        members = [uuidutils.generate_uuid() for _ in range(3)]
        group = self.make_group(members=members)
        self.assertEqual(members, group.members)

    def test_create_with_unknown_policy_is_invalid(self):
        exc = self.assertRaises(exception.Invalid, self.make_group,
                                policy='soft-affinity')
        self.assertIn('anti-affinity', str(exc))

    def test_create_with_empty_name_is_invalid(self):
        self.assertRaises(exception.Invalid, self.make_group, name=' ')

    def test_create_with_a_taken_uuid_raises_exists(self):
        group = self.make_group()
        exc = self.assertRaises(exception.ServerGroupExists,
                                self.make_group, uuid=group.uuid)
        self.assertIn(group.uuid, str(exc))

    def test_get_by_uuid_returns_group_and_members(self):
        member = uuidutils.generate_uuid()
        group = self.make_group(policy='affinity', members=[member])
        self.assertEqual(group.to_dict(),
                         ServerGroup.get_by_uuid(self.ctx,
                                                 group.uuid).to_dict())

    def test_get_by_uuid_of_unknown_group_raises_not_found(self):
        self.assertRaises(exception.ServerGroupNotFound,
                          ServerGroup.get_by_uuid, self.ctx,
                          uuidutils.generate_uuid())

    def test_get_page_returns_only_that_projects_groups(self):
        first = self.make_group('a')
        second = self.make_group('b', members=[uuidutils.generate_uuid()])
        self.make_group('c', project_id='p2')
        groups = ServerGroup.get_page(self.ctx, 'p1', limit=1000)
        self.assertEqual([first.to_dict(), second.to_dict()],
                         [group.to_dict() for group in groups])

    def test_get_by_instance_uuid_finds_the_members_group(self):
        member = uuidutils.generate_uuid()
        self.make_group('other', members=[uuidutils.generate_uuid()])
        group = self.make_group(members=[member])
        self.assertEqual(group.uuid, ServerGroup.get_by_instance_uuid(
            self.ctx, member).uuid)

    def test_get_by_instance_uuid_of_a_loner_raises_not_found(self):
        self.assertRaises(exception.ServerGroupNotFound,
                          ServerGroup.get_by_instance_uuid, self.ctx,
                          uuidutils.generate_uuid())

    def test_add_members_appends_and_refreshes(self):
        first, second = (uuidutils.generate_uuid() for _ in range(2))
        group = self.make_group(members=[first])
        group.add_members(self.ctx, [second])
        self.assertEqual([first, second], group.members)
        self.assertEqual([first, second], ServerGroup.get_by_uuid(
            self.ctx, group.uuid).members)

    def test_adding_a_member_again_is_harmless(self):
        member = uuidutils.generate_uuid()
        group = self.make_group(members=[member])
        group.add_members(self.ctx, [member, member])
        self.assertEqual([member], group.members)

    def test_member_of_another_group_is_refused_and_nothing_added(self):
        taken, free = (uuidutils.generate_uuid() for _ in range(2))
        other = self.make_group('other', members=[taken])
        group = self.make_group()
        exc = self.assertRaises(exception.Invalid, group.add_members,
                                self.ctx, [free, taken])
        self.assertIn(other.uuid, str(exc))
        self.assertEqual([], ServerGroup.get_by_uuid(self.ctx,
                                                     group.uuid).members)

    def test_concurrent_adds_of_the_same_member_store_it_once(self):
        group = self.make_group()
        member = uuidutils.generate_uuid()
        barrier = threading.Barrier(4)
        errors = []

        def add():
            barrier.wait()
            try:
                ServerGroup.get_by_uuid(
                    context.get_admin_context(), group.uuid).add_members(
                        context.get_admin_context(), [member])
            except Exception as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=add) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual([], errors)
        self.assertEqual([member], ServerGroup.get_by_uuid(
            self.ctx, group.uuid).members)

    def test_destroy_removes_group_and_membership(self):
        member = uuidutils.generate_uuid()
        group = self.make_group(members=[member])
        group.destroy(self.ctx)
        self.assertRaises(exception.ServerGroupNotFound,
                          ServerGroup.get_by_uuid, self.ctx, group.uuid)
        # The server is free to join another group.
        self.make_group('next', members=[member])

    def test_destroy_twice_raises_not_found(self):
        group = self.make_group()
        group.destroy(self.ctx)
        self.assertRaises(exception.ServerGroupNotFound, group.destroy,
                          self.ctx)


class SQLiteServerGroupTest(_ServerGroupTests, base.SQLiteMixin,
                            spec_base.ObjectTestCase):
    pass


class MySQLServerGroupTest(_ServerGroupTests, base.MySQLMixin,
                           spec_base.ObjectTestCase):
    pass


class PostgreSQLServerGroupTest(_ServerGroupTests, base.PostgreSQLMixin,
                                spec_base.ObjectTestCase):
    pass
