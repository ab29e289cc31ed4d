"""Who is asking: a request context from the token, or a 401.

``noauth2`` (the embedded default) trusts ``X-Auth-Token: USER:PROJECT``;
the user ``admin`` gets the ``admin`` role in a system-scoped context,
which the default ``context_is_admin`` rule makes an administrator.
``keystone`` puts keystonemiddleware's ``auth_token`` in front, which
validates the token and leaves the identity in headers (``X-User-Id``,
``X-Project-Id``, ``X-Roles``, ``OpenStack-System-Scope``);
keystonemiddleware is an optional extra, imported only then.

What the caller may do is oslo.policy's to say (``cellboot.policy``):
``is_admin`` is the ``context_is_admin`` rule, and ``may`` answers the
views' questions (may this caller see the host of a server of that
project?) once per request and project.
"""

import importlib

from cellboot.api import errors
from cellboot.api import inputs
from cellboot.conf import api as api_conf
from cellboot import context as cb_context
from cellboot import exception
from cellboot import policy

ADMIN_USER = 'admin'
ADMIN_ROLE = 'admin'
# The roles every noauth2 user holds in its project (keystone's default
# roles, of which admin implies the others).
MEMBER_ROLES = ['member', 'reader']
SYSTEM_SCOPE_ALL = 'all'
CONTEXT_KEY = 'cellboot.context'

# Longest user or project id accepted (the columns' width).
MAX_ID_LENGTH = 255


def _identity_header(request, name):
    """A header that names a user or project, as UTF-8 text; 401 when
    it is not (WSGI hands headers over as latin-1: bytes that are not
    UTF-8 would otherwise become ids no one typed)."""
    value = request.headers.get(name)
    if value is None:
        return None
    value = value.encode('latin-1').decode('utf-8', 'surrogateescape')
    if not inputs.storable(value):
        raise errors.Unauthorized(f'{name} must be UTF-8 text without NUL '
                                  f'characters.')
    return value


def _noauth2_context(request):
    token = _identity_header(request, 'X-Auth-Token')
    if not token:
        raise errors.Unauthorized()
    user_id, sep, project_id = token.partition(':')
    user_id, project_id = user_id.strip(), project_id.strip()
    if (not sep or not user_id or not project_id
            or len(user_id) > MAX_ID_LENGTH
            or len(project_id) > MAX_ID_LENGTH):
        raise errors.Unauthorized(
            'X-Auth-Token must be USER:PROJECT with auth_strategy noauth2.')
    admin = user_id == ADMIN_USER
    return cb_context.RequestContext(
        user_id=user_id, project_id=project_id,
        roles=([ADMIN_ROLE] if admin else []) + MEMBER_ROLES,
        system_scope=SYSTEM_SCOPE_ALL if admin else None,
        request_id=request.environ.get('openstack.request_id'))


def _keystone_context(request):
    """The identity keystonemiddleware vouched for.

    A token is scoped to a project or to the system; a system-scoped one
    has no project (its holder can act on existing resources where the
    policy lets it, and owns none).
    """
    if request.headers.get('X-Identity-Status', 'Confirmed') != 'Confirmed':
        raise errors.Unauthorized('The token was not accepted.')
    # Read as UTF-8 (401 for bytes that are not): the headers arrive
    # as latin-1 text, which would make ids no one typed.
    user_id = _identity_header(request, 'X-User-Id')
    project_id = _identity_header(request, 'X-Project-Id')
    context = cb_context.RequestContext.from_environ(
        request.environ)
    context.user_id, context.project_id = user_id, project_id
    if not context.user_id or not (context.project_id
                                   or context.system_scope):
        raise errors.Unauthorized()
    return context


def context_from_request(request, strategy):
    """The RequestContext of ``request``; 401 without a usable identity.

    ``is_admin`` is set from the policy's ``context_is_admin`` rule.
    """
    if strategy == api_conf.KEYSTONE:
        context = _keystone_context(request)
    else:
        context = _noauth2_context(request)
    context.is_admin = policy.check_is_admin(context)
    return context


def wrap_keystone(application):
    """``application`` behind keystonemiddleware's auth_token.

    ConfigurationError, with the way out, when the extra is missing.
    """
    try:
        auth_token = importlib.import_module('keystonemiddleware.auth_token')
    except ImportError:
        raise exception.ConfigurationError(
            reason='[api] auth_strategy = keystone needs keystonemiddleware, '
                   'which is not installed: pip install "cellboot[keystone]"'
                   ' (or set [api] auth_strategy = noauth2)')
    return auth_token.AuthProtocol(application, {'delay_auth_decision':
                                                 True})


def authorize(context, rule, target=None):
    """403 unless the policy lets ``context`` do ``rule`` on ``target``."""
    try:
        policy.authorize(context, rule, target)
    except exception.PolicyNotAuthorized as exc:
        raise errors.Forbidden(str(exc))


def may(context, rule, project_id, user_id=None):
    """Whether ``rule`` allows the caller on a resource of ``project_id``.

    For what a view shows rather than what a request does: never raises,
    and remembers the answer on the context for the rest of the request
    (a listing asks once per project, not once per server).
    """
    answers = context.__dict__.setdefault('_cellboot_policy_answers', {})
    key = (rule, project_id, user_id)
    if key not in answers:
        answers[key] = bool(policy.authorize(
            context, rule, {'project_id': project_id, 'user_id': user_id},
            do_raise=False))
    return answers[key]


def owning_project(context):
    """The project that a resource the caller creates belongs to.

    A system-scoped token has none: it may administer, not own; 403.
    """
    if not context.project_id:
        raise errors.Forbidden('Creating a resource needs a project-scoped '
                               'token; this one is scoped to the system.')
    return context.project_id
