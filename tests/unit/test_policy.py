"""Who is an administrator, and how a policy file changes who may do what."""

import os

import webob

from cellboot.api import auth
from cellboot.api import routes
from cellboot.conf import api as api_conf
from cellboot import context as cb_context
from cellboot import exception
from cellboot import policies
from cellboot.policies import base as base_policies
from cellboot import policy
from tests import base


def _keystone_request(roles, project_id='p1', system_scope=None):
    headers = {'X-Identity-Status': 'Confirmed', 'X-User-Id': 'u1',
               'X-Roles': ','.join(roles)}
    if project_id:
        headers['X-Project-Id'] = project_id
    if system_scope:
        headers['OpenStack-System-Scope'] = system_scope
    return webob.Request.blank('/v2.1/servers', headers=headers)


def _noauth2_request(token):
    return webob.Request.blank('/v2.1/servers',
                               headers={'X-Auth-Token': token})


class PolicyTestCase(base.TestCase):

    def write_policy(self, text):
        path = self.conf_fixture.policy_file
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
        # oslo.policy notices a change by the file's modification time;
        # two writes within its resolution must still be told apart.
        stamp = os.stat(path).st_mtime + getattr(self, '_bump', 0) + 1
        self._bump = getattr(self, '_bump', 0) + 1
        os.utime(path, (stamp, stamp))


class AdminTest(PolicyTestCase):

    def test_the_noauth2_user_admin_is_an_admin(self):
        context = auth.context_from_request(
            _noauth2_request('admin:some-project'), api_conf.NOAUTH2)
        self.assertTrue(context.is_admin)

    def test_another_noauth2_user_is_not_an_admin(self):
        context = auth.context_from_request(
            _noauth2_request('alice:some-project'), api_conf.NOAUTH2)
        self.assertFalse(context.is_admin)

    def test_a_project_scoped_keystone_admin_is_not_a_cloud_admin(self):
        context = auth.context_from_request(
            _keystone_request(['admin', 'member', 'reader']),
            api_conf.KEYSTONE)
        self.assertFalse(context.is_admin)
        self.assertRaises(exception.PolicyNotAuthorized, policy.authorize,
                          context, 'cellboot:os-cells:index')

    def test_a_system_scoped_keystone_admin_is_a_cloud_admin(self):
        context = auth.context_from_request(
            _keystone_request(['admin', 'member', 'reader'], project_id=None,
                              system_scope='all'), api_conf.KEYSTONE)
        self.assertTrue(context.is_admin)
        self.assertTrue(policy.authorize(context, 'cellboot:os-cells:index'))

    def test_a_policy_file_can_make_any_admin_role_a_cloud_admin(self):
        self.write_policy('"context_is_admin": "role:admin"\n')
        context = auth.context_from_request(
            _keystone_request(['admin']), api_conf.KEYSTONE)
        self.assertTrue(context.is_admin)
        self.assertTrue(policy.authorize(
            context, 'os_compute_api:os-hypervisors:list-detail'))

    def test_another_system_scope_than_all_is_not_a_cloud_admin(self):
        context = auth.context_from_request(
            _keystone_request(['admin'], system_scope='project'),
            api_conf.KEYSTONE)
        self.assertFalse(context.is_admin)

    def test_the_admin_api_rule_decides_who_is_an_administrator(self):
        user = auth.context_from_request(
            _noauth2_request('alice:p1'), api_conf.NOAUTH2)
        self.assertEqual(403, self.assertRaises(
            Exception, auth.authorize, user, base_policies.ADMIN_API).code)
        self.write_policy('"admin_api": "user_id:alice"\n')
        auth.authorize(user, base_policies.ADMIN_API)

    def test_a_keystone_token_without_project_or_system_is_401(self):
        error = self.assertRaises(
            Exception, auth.context_from_request,
            _keystone_request(['admin'], project_id=None), api_conf.KEYSTONE)
        self.assertEqual(401, error.code)

    def test_a_system_scoped_token_owns_nothing(self):
        context = auth.context_from_request(
            _keystone_request(['admin'], project_id=None,
                              system_scope='all'), api_conf.KEYSTONE)
        error = self.assertRaises(Exception, auth.owning_project, context)
        self.assertEqual(403, error.code)


class RulesTest(PolicyTestCase):

    def user(self, project_id='p1'):
        return cb_context.RequestContext(user_id='u1', project_id=project_id,
                                         roles=['member', 'reader'])

    def test_every_authenticated_route_names_a_registered_rule(self):
        registered = {rule.name for rule in policies.list_rules()}
        for route in routes.ROUTES:
            if route.authenticated:
                self.assertIn(route.policy, registered,
                              f'{route.method} {route.path}')

    def test_rule_names_are_unique(self):
        names = [rule.name for rule in policies.list_rules()]
        self.assertEqual(len(names), len(set(names)))

    def test_the_quota_set_rules_are_registered(self):
        names = {rule.name for rule in policies.list_rules()}
        self.assertIn('os_compute_api:os-quota-sets:show', names)
        self.assertIn('os_compute_api:os-quota-sets:update', names)

    def test_an_owner_may_show_its_server_and_not_anothers(self):
        self.assertTrue(policy.authorize(
            self.user(), 'os_compute_api:servers:show', {'project_id': 'p1'}))
        self.assertFalse(policy.authorize(
            self.user(), 'os_compute_api:servers:show', {'project_id': 'p2'},
            do_raise=False))

    def test_a_user_may_not_use_target_cell(self):
        self.assertRaises(exception.PolicyNotAuthorized, policy.authorize,
                          self.user(), 'cellboot:servers:create:target_cell')

    def test_an_unregistered_rule_is_refused(self):
        self.assertRaises(exception.PolicyNotAuthorized, policy.authorize,
                          self.user(), 'cellboot:no-such-rule')

    def test_an_edited_policy_file_takes_effect_without_a_restart(self):
        rule = 'os_compute_api:servers:create'
        self.assertTrue(policy.authorize(self.user(), rule))
        self.write_policy(f'"{rule}": "!"\n')
        self.assertFalse(policy.authorize(self.user(), rule,
                                          do_raise=False))
        self.write_policy(f'"{rule}": "project_id:%(project_id)s"\n')
        self.assertTrue(policy.authorize(self.user(), rule))
