"""Who is asking: a request context from the token, or a 401.

``noauth2`` (the embedded default) trusts ``X-Auth-Token: USER:PROJECT``
and makes the user ``admin`` an administrator. ``keystone`` puts
keystonemiddleware's ``auth_token`` in front, which validates the token
and leaves the identity in ``X-User-Id``/``X-Project-Id``/``X-Roles``;
keystonemiddleware is an optional extra, imported only then.
"""

import importlib

from cellboot.api import errors
from cellboot.api import inputs
from cellboot.conf import api as api_conf
from cellboot import context as cb_context
from cellboot import exception

ADMIN_USER = 'admin'
ADMIN_ROLE = 'admin'
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
    is_admin = user_id == ADMIN_USER
    return cb_context.RequestContext(
        user_id=user_id, project_id=project_id, is_admin=is_admin,
        roles=[ADMIN_ROLE] if is_admin else [],
        request_id=request.environ.get('openstack.request_id'))


def _keystone_context(request):
    if request.headers.get('X-Identity-Status', 'Confirmed') != 'Confirmed':
        raise errors.Unauthorized('The token was not accepted.')
    user_id = _identity_header(request, 'X-User-Id')
    project_id = _identity_header(request, 'X-Project-Id')
    if not user_id or not project_id:
        raise errors.Unauthorized()
    roles = [role.strip() for role in
             request.headers.get('X-Roles', '').split(',') if role.strip()]
    return cb_context.RequestContext(
        user_id=user_id, project_id=project_id,
        is_admin=ADMIN_ROLE in roles, roles=roles)


def context_from_request(request, strategy):
    """The RequestContext of ``request``; 401 without a usable identity."""
    if strategy == api_conf.KEYSTONE:
        return _keystone_context(request)
    return _noauth2_context(request)


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


def require_admin(context):
    if not context.is_admin:
        raise errors.Forbidden()
