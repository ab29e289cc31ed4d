"""What ``GET /servers`` and ``/servers/detail`` filter and sort by.

The query is checked whole before anything is read: a parameter the
list does not know, or a known one with a value that cannot mean
anything (a status cellboot's servers never have, a ``name`` that is not
a regular expression, a date that is not ISO 8601, a sort key off the
list), answers 400. A filter silently dropped would answer a list that
looks right and is not: ``?status=ERROR`` returning every server.

Who may widen the list is the policy's to say, as Nova does:
``all_tenants`` (every project, or the one ``project_id`` names) and the
``host`` filter need their rules (administrators by default); anyone
else gets 403, never another project's servers. ``project_id`` without
``all_tenants`` is ignored, as in Nova: a project's list is its own.

A filter is applied twice, for two reasons. In each cell's query
(``cell_clause``), where the instance columns hold it (status, host,
image, changes-since), so that a cell answers only matching rows; and
on every record read (``keeps``), which also covers what SQL cannot
hold portably (a regular expression, the flavor inside the instance's
JSON) and build requests, which are never in a cell.
"""

import dataclasses
import re

from oslo_utils import timeutils
import sqlalchemy as sa

from cellboot.api import auth
from cellboot.api import errors
from cellboot.api import inputs
from cellboot.api import server_records
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import instance_table
from cellboot.policies import servers as server_policies

# Nova's server status per vm_state, for those cellboot's servers have
# (a deleted server is not listed).
STATUS_STATES = {'BUILD': instance_table.vm_states.BUILDING,
                 'ACTIVE': instance_table.vm_states.ACTIVE,
                 'ERROR': instance_table.vm_states.ERROR}

# Longest ``name`` expression accepted. Python's ``re`` backtracks, so a
# crafted expression can take exponential time on a long name; names
# are at most 255 characters and an expression this short with nested
# repetition is refused too (``_risky``), which keeps a match bounded.
MAX_NAME_PATTERN = 255

# Sort keys, and directions. Servers are paged in the order they were
# created (the API database's mapping ids; see server_records), which is
# the only order a page of many cells can be read in at one indexed
# query per database.
SORT_KEYS = ('created_at',)
SORT_DIRS = ('asc', 'desc')

# Query parameters of the lists besides ``limit`` and ``marker``.
QUERY = ('reservation_id', 'all_tenants', 'project_id', 'status', 'name',
         'host', 'flavor', 'image', 'changes-since', 'sort_key', 'sort_dir')

# What the OpenAPI document says of them; the values are checked here.
QUERY_SCHEMAS = {
    'all_tenants': {'type': 'string',
                    'pattern': r'^\s*(?:0|1|[Tt]rue|[Ff]alse)?\s*$',
                    'description': "1 or true: every project's servers "
                                   '(administrators)'},
    'status': {'type': 'string',
               'description': 'BUILD, ACTIVE or ERROR, any case '
                              '(repeatable)'},
    'name': {'type': 'string',
             'description': 'a regular expression searched in the name '
                            f'(1 to {MAX_NAME_PATTERN} characters)'},
    'changes-since': {'type': 'string',
                      'description': 'changed at or after this ISO 8601 '
                                     'time'},
    'sort_key': {'type': 'string',
                 'description': f'one of {", ".join(SORT_KEYS)}'},
    'sort_dir': {'type': 'string', 'description': 'asc or desc'},
}

# What repeats what comes before it without bound, or a number of times.
_REPEATS = '*+{'


@dataclasses.dataclass
class Filters:
    """One list request's filters; None: not filtered by it."""

    project_id: str = None
    statuses: frozenset = None
    name: re.Pattern = None
    host: str = None
    flavor: str = None
    image: str = None
    changes_since: object = None
    reservation_id: str = None
    descending: bool = False

    def cell_clause(self):
        """A clause over a cell's instances table, or None."""
        columns = instance_table.INSTANCES.c
        clauses = []
        if self.statuses is not None:
            clauses.append(columns.vm_state.in_(
                sorted(STATUS_STATES[s] for s in self.statuses)))
        if self.host is not None:
            clauses.append(columns.host == self.host)
        if self.image is not None:
            clauses.append(columns.image_ref == self.image)
        if self.reservation_id is not None:
            clauses.append(columns.reservation_id == self.reservation_id)
        if self.changes_since is not None:
            # A row never updated has only its creation time.
            clauses.append(sa.func.coalesce(
                columns.updated_at, columns.created_at) >= self.changes_since)
        return sa.and_(*clauses) if clauses else None

    def any_record_filter(self):
        return any(value is not None for value in (
            self.statuses, self.name, self.host, self.flavor, self.image,
            self.changes_since, self.reservation_id))

    def keeps(self, record):
        """Whether a record read for the page passes every filter.

        A server whose cell did not answer cannot be checked: it is
        listed (status UNKNOWN) only when nothing but the project
        narrows the list, so that a filtered list holds only servers
        known to match.
        """
        fields = _fields(record)
        if fields is None:
            return not self.any_record_filter()
        status, name, host, flavor, image, changed, reservation = fields
        return ((self.statuses is None or status in self.statuses)
                and (self.name is None
                     or self.name.search(name or '') is not None)
                and (self.host is None or host == self.host)
                and (self.flavor is None or flavor == self.flavor)
                and (self.image is None or image == self.image)
                and (self.changes_since is None
                     or (changed is not None
                         and changed >= self.changes_since))
                and (self.reservation_id is None
                     or reservation == self.reservation_id))


def _fields(record):
    """``(status, name, host, flavor id, image, changed, reservation)``
    of a listed record; None for one whose cell did not answer."""
    if isinstance(record, build_request_obj.BuildRequest):
        inst = record.instance
        return ('BUILD', inst.get('display_name'), None,
                (inst.get('flavor') or {}).get('flavorid'),
                inst.get('image_ref'), record.created_at,
                inst.get('reservation_id'))
    if isinstance(record, server_records.InCell):
        inst = record.instance
        status = next((name for name, state in STATUS_STATES.items()
                       if state == inst.vm_state), None)
        return (status, inst.display_name, inst.host,
                (inst.flavor or {}).get('flavorid'), inst.image_ref,
                inst.updated_at or inst.created_at, inst.reservation_id)
    return None


def _one(request, name):
    """The single value of ``name``; 400 when it is given twice."""
    values = request.GET.getall(name)
    if not values:
        return None
    if len(values) > 1:
        raise errors.BadRequest(f'{name} may be given once.')
    return values[0]


def _nonempty(request, name, longest=255):
    value = _one(request, name)
    if value is not None and not 0 < len(value) <= longest:
        raise errors.BadRequest(
            f'{name} must be 1 to {longest} characters.')
    return value


def _statuses(request):
    values = request.GET.getall('status')
    if not values:
        return None
    wrong = [value for value in values if value.upper() not in STATUS_STATES]
    if wrong:
        raise errors.BadRequest(
            f'Invalid status {inputs.printable(wrong[0][:40])!r}: a '
            f'server\'s status is one of {", ".join(sorted(STATUS_STATES))}.')
    return frozenset(value.upper() for value in values)


def _risky(pattern):
    """Whether ``pattern`` repeats a group that repeats or alternates.

    ``(a+)+``, ``((a*))*``, ``(a|aa){2,}``: the shapes whose
    backtracking grows exponentially with the name's length. A scan of
    the expression's groups (escapes and character classes skipped), so
    that nesting cannot hide one; it refuses some harmless expressions
    too, which a name filter can always write otherwise.
    """
    stack = [False]  # per open group: it holds a repetition/alternation
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == '\\':
            index += 2
            continue
        if char == '[':
            close = pattern.find(']', index + 2)
            index = len(pattern) if close < 0 else close + 1
            continue
        if char == '(':
            stack.append(False)
        elif char == ')' and len(stack) > 1:
            inner = stack.pop()
            repeated = pattern[index + 1:index + 2] in tuple(_REPEATS)
            if inner and repeated:
                return True
            stack[-1] = stack[-1] or inner
        elif char in _REPEATS or char == '|':
            stack[-1] = True
        index += 1
    return False


def _name(request):
    pattern = _one(request, 'name')
    if pattern is None:
        return None
    if not 0 < len(pattern) <= MAX_NAME_PATTERN:
        raise errors.BadRequest(
            f'name must be a regular expression of 1 to '
            f'{MAX_NAME_PATTERN} characters.')
    if _risky(pattern):
        raise errors.BadRequest(
            'name must not repeat a group that itself repeats or '
            'alternates (such as "(a+)+"): that expression could take '
            'too long to match.')
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        raise errors.BadRequest(
            f'name is not a valid regular expression: {exc}.')


def _changes_since(request):
    value = _one(request, 'changes-since')
    if value is None:
        return None
    try:
        if len(value) > 64:
            raise ValueError('too long')
        when = timeutils.parse_isotime(value)
    except (ValueError, TypeError, OverflowError):
        raise errors.BadRequest(
            f'changes-since must be an ISO 8601 time such as '
            f'2026-01-31T12:00:00Z, not {inputs.printable(value[:40])!r}.')
    # Stored times are naive UTC.
    return timeutils.normalize_time(when)


def _sort(request):
    key = _one(request, 'sort_key')
    direction = _one(request, 'sort_dir')
    if key is not None and key not in SORT_KEYS:
        raise errors.BadRequest(
            f'Servers cannot be sorted by {inputs.printable(key[:40])!r}: '
            f'sort_key is one of {", ".join(SORT_KEYS)}.')
    if direction is not None and direction not in SORT_DIRS:
        raise errors.BadRequest(
            f'sort_dir is {" or ".join(SORT_DIRS)}, not '
            f'{inputs.printable(direction[:40])!r}.')
    return direction == 'desc'


def _project(request, context):
    """The project listed; None: every project (administrators).

    A token with no project (system-scoped) has no list of its own: it
    asks for ``all_tenants`` (400 otherwise), so that None is never
    taken for "every project" without the policy's say.
    """
    if not inputs.all_tenants(request):
        if not context.project_id:
            raise errors.BadRequest('A token with no project lists with '
                                    'all_tenants=1.')
        return context.project_id
    auth.authorize(context, server_policies.INDEX_ALL_TENANTS)
    return _nonempty(request, 'project_id')


def from_request(request, context):
    """The Filters of a list request; 400 or 403 for what it may not ask."""
    unknown = sorted(set(request.GET) - set(QUERY + ('limit', 'marker')))
    if unknown:
        raise errors.BadRequest(
            f'Unknown filter {inputs.printable(unknown[0][:40])!r}: the '
            f'server lists take {", ".join(QUERY)}, limit and marker.')
    host = _nonempty(request, 'host')
    if host is not None:
        auth.authorize(context, server_policies.INDEX_HOST_FILTER)
    return Filters(
        project_id=_project(request, context),
        statuses=_statuses(request), name=_name(request), host=host,
        flavor=_nonempty(request, 'flavor'),
        image=_nonempty(request, 'image'),
        changes_since=_changes_since(request),
        reservation_id=_nonempty(request, 'reservation_id'),
        descending=_sort(request))
