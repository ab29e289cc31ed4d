"""What a build was cast with, kept in its cell to send it again.

``build_and_run_instance`` carries, besides the instance, the alternates
left for a reschedule (Selection dicts of the same cell), the request
spec and the retry state. A broker can lose that cast, and the cell
conductor that notices (``cellboot.conductor.untaken_builds``) reads
only its cell's database: the boot flow's selections are in the flow
database, out of its reach. So the boot flow's ``create-in-cell`` and
the reschedule flow's ``claim-alternate`` store those arguments with
the instance (``instances.build_args``), and the cell conductor re-sends
the build, or moves it to the first alternate, from them.

The column is in the cell's database, which a compromised cell writes:
``read`` takes nothing on trust. Anything but the shape ``make``
writes (not JSON, not an object, alternates that are not Selection-like
dicts) reads as None, and the build is then re-sent with no alternates,
an empty request spec and no retry state; a reschedule of it has no
alternate to go to and ends in ERROR. Nothing read here names code or
reaches outside the cell: the alternates are hosts that the cell
conductor's scheduler checks (a claim outside the cell is refused).
"""

from oslo_serialization import jsonutils

# The keys of an alternate that the reschedule flow uses.
_SELECTION_KEYS = ('service_host', 'nodename', 'compute_node_uuid')


def make(host_list, request_spec, retry):
    """The dict to store: what the cast carries besides the instance."""
    return {'host_list': list(host_list or []),
            'request_spec': dict(request_spec or {}),
            'retry': dict(retry) if retry else None}


def empty():
    """What a build with no (readable) stored arguments is sent with."""
    return make([], {}, None)


def _selection(value):
    return (isinstance(value, dict) and
            all(isinstance(value.get(key), str) for key in _SELECTION_KEYS)
            and isinstance(value.get('allocation_request', {}), dict))


def _retry(value):
    if value is None:
        return True
    return (isinstance(value, dict) and
            isinstance(value.get('num_attempts', 0), int) and
            not isinstance(value.get('num_attempts', 0), bool) and
            isinstance(value.get('hosts', []), list))


def read(raw):
    """The stored arguments (``make``'s shape), or None; never raises."""
    if raw is None:
        return None
    if isinstance(raw, (bytes, str)):
        try:
            value = jsonutils.loads(raw)
        except (TypeError, ValueError, RecursionError):
            return None
    else:
        value = raw
    if not isinstance(value, dict):
        return None
    host_list = value.get('host_list')
    request_spec = value.get('request_spec')
    retry = value.get('retry')
    if (not isinstance(host_list, list) or
            not all(_selection(item) for item in host_list) or
            not isinstance(request_spec, dict) or not _retry(retry)):
        return None
    return make(host_list, request_spec, retry)


def next_retry(retry, host, node, failure):
    """The retry state after a failed attempt on ``host``/``node``.

    ``retry`` is what this attempt came with ({'num_attempts',
    'hosts', 'last_failure'}; None on the first attempt): the number of
    attempts made and the [host, node] pairs tried so far, this one not
    yet among them.
    """
    retry = retry or {}
    if retry.get('hosts') and list(retry['hosts'][-1]) == [host, node]:
        # Counted already: a reschedule handed back by this host and
        # started from what it stored (``hand_back``); the hosts of a
        # build's attempts are never the same twice in a row (its
        # alternates exclude the hosts tried).
        return dict(retry)
    return {'num_attempts': retry.get('num_attempts', 0) + 1,
            'hosts': [list(pair) for pair in retry.get('hosts', [])] +
            [[host, node]],
            'last_failure': failure}
