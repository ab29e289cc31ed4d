"""The rules every other rule is made of: who is an administrator.

``context_is_admin`` decides who administers the whole deployment. Its
default asks for the ``admin`` role *in a system-scoped token*
(``system_scope:all``): with keystone, a user who holds ``admin`` in some
project is an administrator of that project only, not of every cell,
host and flow. Operators who want the older behaviour (any ``admin`` role
is a cloud administrator, as Nova's default has it) override this one
rule with ``"role:admin"``. With ``[api] auth_strategy = noauth2`` the
user ``admin`` gets the ``admin`` role in a system-scoped context, so it
stays an administrator under the default.
"""

from oslo_policy import policy

CONTEXT_IS_ADMIN = 'context_is_admin'
ADMIN_API = 'admin_api'
ADMIN_OR_OWNER = 'admin_or_owner'

RULE_ADMIN_API = f'rule:{ADMIN_API}'
RULE_ADMIN_OR_OWNER = f'rule:{ADMIN_OR_OWNER}'

rules = [
    policy.RuleDefault(
        CONTEXT_IS_ADMIN,
        'role:admin and system_scope:all',
        description='Who administers the whole deployment: every project, '
                    'cell, host and flow. The default needs the admin role '
                    'in a system-scoped token, so that a project-scoped '
                    'admin role grants nothing beyond its project; set '
                    '"role:admin" to make any admin role a cloud '
                    'administrator.'),
    policy.RuleDefault(
        ADMIN_API,
        f'rule:{CONTEXT_IS_ADMIN}',
        description='APIs for administrators only (hosts, cells, flows, '
                    'flavor management, and what the server views show '
                    'of the infrastructure).'),
    policy.RuleDefault(
        ADMIN_OR_OWNER,
        f'rule:{CONTEXT_IS_ADMIN} or project_id:%(project_id)s',
        description='An administrator, or a member of the project that '
                    'owns the resource.'),
]


def list_rules():
    return rules
