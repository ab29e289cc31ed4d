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
from cellboot.api import server_sort
from cellboot.api import views
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import instance_table
from cellboot.policies import servers as server_policies

# The vm_state of each status a listed server can have: the views'
# mapping turned around (a deleted server is not listed).
STATUS_STATES = {status: state for state, status in views.STATUS.items()
                 if state != instance_table.vm_states.DELETED}

# Longest ``name`` expression accepted. Python's ``re`` backtracks, so a
# crafted expression can take exponential time on a long name: names are
# at most 255 characters, and an expression that could backtrack much is
# refused too (``_risky``), which keeps a match bounded.
MAX_NAME_PATTERN = 255

# Sort keys (Nova's names; ``server_sort`` says how each is read across
# cells), and directions.
SORT_KEYS = server_sort.SORT_KEYS
SORT_DIRS = ('asc', 'desc')

# Query parameters of the lists besides ``limit`` and ``marker``.
QUERY = ('reservation_id', 'all_tenants', 'project_id', 'status', 'name',
         'host', 'flavor', 'image', 'changes-since', 'sort_key', 'sort_dir')

# Their schemas: checked by the router before the handler runs (a value
# that breaks one answers 400 naming it), and published in the OpenAPI
# document. What a schema cannot say (a regular expression that
# compiles, a real date) is checked here.
_TEXT = {'type': 'string', 'minLength': 1, 'maxLength': 255,
         'description': '1 to 255 characters'}
QUERY_SCHEMAS = {
    'all_tenants': {'type': 'string',
                    'pattern': r'^\s*(?:0|1|[Tt]rue|[Ff]alse)?\s*$',
                    'description': "1 or true: every project's servers "
                                   '(administrators)'},
    'status': {'type': 'string',
               'pattern': '^(?:' + '|'.join(
                   ''.join(f'[{c}{c.lower()}]' for c in status)
                   for status in sorted(STATUS_STATES)) + ')$',
               'description': 'a status: ' + ', '.join(sorted(
                   STATUS_STATES)) + ' (any case; repeatable)'},
    'name': {'type': 'string', 'minLength': 1,
             'maxLength': MAX_NAME_PATTERN,
             'description': 'a regular expression of 1 to '
                            f'{MAX_NAME_PATTERN} characters, searched in '
                            'the name'},
    'changes-since': {'type': 'string', 'format': 'date-time',
                      'maxLength': 64,
                      'description': 'an ISO 8601 time: servers changed at '
                                     'or after it'},
    'sort_key': {'type': 'string', 'enum': list(SORT_KEYS),
                 'description': f'one of {", ".join(SORT_KEYS)}'},
    'sort_dir': {'type': 'string', 'enum': list(SORT_DIRS),
                 'description': 'asc or desc'},
    'project_id': _TEXT, 'host': _TEXT, 'flavor': _TEXT, 'image': _TEXT,
    'reservation_id': _TEXT,
}

# What repeats what comes before it (``?`` is counted apart: it also
# opens a group's flags and makes a repetition lazy).
_REPEATS = '*+{'
# Repetitions a ``name`` expression may hold (see ``_risky``).
MAX_REPETITIONS = 1


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
    sort_key: str = server_sort.DEFAULT_SORT_KEY
    descending: bool = False

    def merged_from_cells(self):
        """Whether the list is read by ``server_sort`` (merged from the
        cells) rather than paged by the API database's mappings."""
        return (self.sort_key != server_sort.DEFAULT_SORT_KEY
                or self.changes_since is not None)

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
    """Whether matching ``pattern`` could take more than quadratic time.

    Python's ``re`` backtracks: ``(a+)+`` or ``(a|aa)*`` take time
    exponential in the name's length, and every repetition added to an
    expression multiplies the worst case by the length again (``\\w*\\w*
    \\d`` costs some 50 ms on a 255-character name, ``a+a+a+b`` five
    times that, per server listed). So an expression may hold one
    repetition (``*``, ``+``, ``?``, ``{m,n}``) at most, and no repeated
    group holding an alternation: a match then costs at most about the
    square of the name's length (below a millisecond). A scan of the
    expression (escapes and character classes skipped), so that no
    nesting hides a repetition; it refuses some harmless expressions
    too, which a name filter can always write otherwise.
    """
    stack = [False]  # per open group: it holds an alternation
    repetitions = 0
    # What the previous token was: '(' opens a group (``(?`` sets its
    # flags), a repetition makes a following ``?`` lazy.
    last = None
    index = 0
    while index < len(pattern):
        char = pattern[index]
        token = 'atom'
        if char == '\\':
            index += 1
        elif char == '[':
            close = pattern.find(']', index + 2)
            index = len(pattern) - 1 if close < 0 else close
        elif char == '(':
            stack.append(False)
            token = '('
        elif char == ')' and len(stack) > 1:
            alternates = stack.pop()
            if alternates and pattern[index + 1:index + 2] in (
                    '*', '+', '{'):
                return True
            stack[-1] = stack[-1] or alternates
        elif char == '|':
            stack[-1] = True
        elif char in _REPEATS or (char == '?' and last not in (
                '(', 'repeat')):
            repetitions += 1
            token = 'repeat'
        elif char == '?':
            token = 'modifier'
        last = token
        index += 1
    return repetitions > MAX_REPETITIONS


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
            f'name may hold {MAX_REPETITIONS} repetition (*, +, ?, {{m,n}}) '
            f'at most and no repeated alternation (such as "(a|b)+"): '
            f'matching it could take too long. Try a plainer expression, '
            f'such as ^web-\\d+$.')
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
    return key or server_sort.DEFAULT_SORT_KEY, direction == 'desc'


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
    sort_key, descending = _sort(request)
    return Filters(
        project_id=_project(request, context),
        statuses=_statuses(request), name=_name(request), host=host,
        flavor=_nonempty(request, 'flavor'),
        image=_nonempty(request, 'image'),
        changes_since=_changes_since(request),
        reservation_id=_nonempty(request, 'reservation_id'),
        sort_key=sort_key, descending=descending)
