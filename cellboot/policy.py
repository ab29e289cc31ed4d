"""Who may do what: oslo.policy's enforcer over cellboot's rules.

The default rules live in code (``cellboot.policies``); a policy file
(``[oslo_policy] policy_file``, by default ``policy.yaml`` found beside
the configuration file, e.g. ``/etc/cellboot/policy.yaml``) overrides any
of them. oslo.policy re-reads the file when it changes, so an edited rule
takes effect on the next request, without a restart.

``authorize`` is the one check the API makes; ``check_is_admin`` reads
``context_is_admin`` for the request context's ``is_admin``.
"""

import threading

from oslo_log import log as logging
from oslo_policy import opts as policy_opts
from oslo_policy import policy

from cellboot.conf import CONF
from cellboot import exception
from cellboot import policies

LOG = logging.getLogger(__name__)

PROJECT = 'cellboot'

# The sample and the documentation name this default; oslo.policy finds
# a relative name in the configuration directories.
DEFAULT_POLICY_FILE = 'policy.yaml'

_ENFORCER = None
_LOCK = threading.Lock()

policy_opts.set_defaults(CONF, policy_file=DEFAULT_POLICY_FILE)


def init(conf=None, policy_file=None, rules=None):
    """The process's enforcer, made on first use with cellboot's rules."""
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is None:
            enforcer = policy.Enforcer(conf or CONF,
                                       policy_file=policy_file, rules=rules)
            enforcer.register_defaults(policies.list_rules())
            _ENFORCER = enforcer
    return _ENFORCER


def reset():
    """Forget the enforcer (tests; a new configuration)."""
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is not None:
            _ENFORCER.clear()
        _ENFORCER = None


def get_enforcer():
    """The ``oslo.policy.enforcer`` entry point (oslopolicy-* commands).

    Those commands pass their own arguments on the command line; the
    configuration files are read from the default places.
    """
    if not CONF._args:
        CONF([], project=PROJECT)
    return init()


def _loaded():
    """The enforcer with its rules read; None if the file is unreadable.

    A policy file that does not parse refuses every request (logged as
    an ERROR naming the file) rather than fall back to the defaults,
    which may grant what the file meant to forbid.
    """
    enforcer = init()
    try:
        enforcer.load_rules()
    except ValueError as exc:
        LOG.error('The policy file %s cannot be read, every request is '
                  'refused until it is fixed: %s', enforcer.policy_path
                  or enforcer.policy_file, exc)
        return None
    return enforcer


def authorize(context, action, target=None, do_raise=True):
    """Whether ``context`` may do ``action`` on ``target``.

    ``target`` is what the rule's ``%(...)s`` fields read, usually the
    ``project_id`` (and ``user_id``) of the resource; by default the
    caller's own. Raises PolicyNotAuthorized (403) when refused and
    ``do_raise``; an action that no rule names is refused too.
    """
    if target is None:
        target = {'project_id': context.project_id,
                  'user_id': context.user_id}
    enforcer = _loaded()
    if enforcer is None:
        if do_raise:
            raise exception.PolicyNotAuthorized(action=action)
        return False
    try:
        return enforcer.authorize(
            action, target, context, do_raise=do_raise,
            exc=exception.PolicyNotAuthorized, action=action)
    except policy.PolicyNotRegistered:
        raise exception.PolicyNotAuthorized(action=action)
    except policy.InvalidScope:
        if do_raise:
            raise exception.PolicyNotAuthorized(action=action)
        return False


def check_is_admin(context):
    """Whether ``context_is_admin`` holds for the context's credentials."""
    credentials = context.to_policy_values()
    enforcer = _loaded()
    if enforcer is None:
        return False
    return enforcer.authorize('context_is_admin', credentials, credentials,
                              do_raise=False)
