"""``/os-quota-sets/{project_id}``: a project's limits, and its usage.

A user reads their own project's quota (403 for another project's);
administrators read any project's and change it. ``/detail`` adds what
the project uses now, in Nova's shape (``limit``, ``in_use``,
``reserved``, the last always 0: quotas are counted, not reserved).
The limits of resource classes set for the project's allocation
requests (``/os-allocations``) are shown, and set, by class name.
"""

from cellboot.api import auth
from cellboot.api import errors
from cellboot.api import schemas
from cellboot import exception
from cellboot.policies import quota_sets as quota_policies
from cellboot import quota
from cellboot.scheduler import allocations

_limit = {'type': 'integer', 'minimum': quota.UNLIMITED,
          'maximum': quota.MAX_LIMIT}

# A resource class name: the limit of allocation requests (``quota``).
CLASS_NAME = {'type': 'string', 'maxLength': 255,
              'pattern': r'^[A-Z][A-Z0-9_]*$'}

# The body of PUT: any of the resources, or of the resource classes
# (allocation requests), each -1 (unlimited) or more.
QUOTA_SET_UPDATE = {
    'type': 'object',
    'properties': {
        'quota_set': {
            'type': 'object',
            'properties': {resource: _limit for resource in quota.RESOURCES},
            'propertyNames': {'anyOf': [
                {'enum': list(quota.RESOURCES)}, CLASS_NAME]},
            'additionalProperties': _limit,
            'minProperties': 1, 'maxProperties': 100,
        },
    },
    'required': ['quota_set'],
    'additionalProperties': False,
}


def _project(context, project_id, rule):
    """The project asked about, if ``rule`` lets the caller act on it.

    The route's check ran against the caller's own project; this one
    runs against the project in the path (403 for another project's
    quota unless the policy allows it).
    """
    try:
        quota.validate_project_id(project_id)
    except exception.Invalid as exc:
        raise errors.BadRequest(str(exc))
    auth.authorize(context, rule, {'project_id': project_id})
    return project_id


def _answer(context, project_id, detail=False):
    limits, _overridden = quota.limits(context, project_id)
    body = {'id': project_id}
    if detail:
        used = quota.usage(context, project_id)
        body.update({resource: {'limit': limits[resource],
                                'in_use': used[resource], 'reserved': 0}
                     for resource in quota.RESOURCES})
    else:
        body.update(limits)
        body.update(quota.class_limits(context, project_id))
    return errors.json_response(200, {'quota_set': body})


def show(api, request, context, project_id):
    return _answer(context, _project(context, project_id,
                                     quota_policies.SHOW))


def detail(api, request, context, project_id):
    return _answer(context, _project(context, project_id,
                                     quota_policies.DETAIL), detail=True)


def update(api, request, context, project_id):
    project_id = _project(context, project_id, quota_policies.UPDATE)
    body = schemas.validate(QUOTA_SET_UPDATE,
                            schemas.parse_json(request))['quota_set']
    quota.update(context, project_id, body,
                 check_classes=allocations.check_class_names)
    return _answer(context, project_id)


def delete(api, request, context, project_id):
    """Revert to the defaults (Nova answers 202, and so does this)."""
    quota.reset(context, _project(context, project_id,
                                  quota_policies.DELETE))
    return errors.json_response(202)
