"""What a persisted flow says, as plain values for operators.

A flow's summary and its atoms' descriptions (the shapes are in
``cellboot.flowrun.lookup``), read from rows written by someone the
reader must not trust: values of the wrong type read as absent, nothing
is imported or called, and a meta that is not JSON makes the flow
corrupt rather than the request fail.
"""

import datetime

from oslo_serialization import jsonutils
from oslo_utils import uuidutils
from taskflow.persistence import models as tf_models
from taskflow.types import failure as tf_failure

from cellboot.flowrun import abandons
from cellboot.flowrun import kinds

# Longest result summary kept per atom (characters).
RESULT_SUMMARY_WIDTH = 80


def parse_time(value):
    """A timestamp as an aware UTC datetime; None if absent or unreadable.

    Flow meta keeps ISO 8601 text, written naive (``utcnow().isoformat()``)
    or with its zone (``Z``, ``+00:00``); TaskFlow's rows keep naive
    datetimes. Naive values are UTC, as everything cellboot writes.
    """
    if isinstance(value, str):
        try:
            value = datetime.datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if not isinstance(value, datetime.datetime):
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=datetime.timezone.utc)
    return value.astimezone(datetime.timezone.utc)


def _text(value):
    """A stored value that must be text; None when it is anything else."""
    return value if isinstance(value, str) else None


def _seconds(value):
    """A stored duration; None unless it is a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _resumptions(value):
    """The meta's ``resumptions``, as a list of three-key dicts.

    Tolerates what a foreign or older writer may have left: no list, or
    entries missing a key.
    """
    if not isinstance(value, (list, tuple)):
        return []
    return [{'by': entry.get('by'), 'at': entry.get('at'),
             'from_state': entry.get('from_state')}
            for entry in value if isinstance(entry, dict)]


def ownership(meta, created_at=None):
    """``(owner, since, resumptions)`` of a flow, from its meta.

    The owner is ``owner``, else ``conductor`` (the one that created the
    flow and never gave it up). ``since`` is the first readable of
    ``owned_since``, ``started_at`` and the row's ``created_at``.
    """
    meta = meta if isinstance(meta, dict) else {}
    owner = _text(meta.get('owner')) or _text(meta.get('conductor'))
    since = None
    for value in (meta.get('owned_since'), meta.get('started_at'),
                  created_at):
        since = parse_time(value)
        if since is not None:
            break
    return owner, since, _resumptions(meta.get('resumptions'))


def _instance_uuids(value):
    if not isinstance(value, (list, tuple)):
        return []
    return [uuid for uuid in value if isinstance(uuid, str)]


def _read_meta(text):
    """A row's meta, from its text; ``(meta, None)`` or ``({}, reason)``.

    Read as text and parsed here: TaskFlow's column type would raise on
    a value that is not JSON, and one such row would hide every flow.
    """
    if text is None:
        return {}, None
    try:
        meta = jsonutils.loads(text)
    except (ValueError, TypeError, RecursionError):
        return {}, 'its meta is not JSON'
    return meta, None


def summary(row, location, level=None):
    """A flow's summary (see ``lookup``), from its summary columns."""
    meta, unreadable = _read_meta(row.meta)
    corrupt = unreadable or kinds.corruption(meta, level)
    meta = meta if isinstance(meta, dict) else {}
    owner, since, resumptions = ownership(meta, row.created_at)
    return {
        'uuid': row.uuid,
        'name': row.name,
        'state': row.state,
        'kind': _text(meta.get('kind')),
        'corrupt': corrupt,
        'instance_uuids': _instance_uuids(meta.get('instance_uuids')),
        'conductor': _text(meta.get('conductor')),
        'owner': owner,
        'since': since,
        'resumptions': resumptions,
        'retries': _resumptions(meta.get('retries')),
        'abandoned': abandons.read(meta),
        'request_id': _text(meta.get('request_id')),
        'started_at': _text(meta.get('started_at')),
        'duration': _seconds(meta.get('duration')),
        'created_at': row.created_at,
        'updated_at': row.updated_at,
        'location': location,
        'meta': meta,
    }


def failure_type(failure):
    """The class name of the exception behind a TaskFlow Failure.

    A Failure iterates over its exception's class names, most derived
    first (it keeps the names, not the class, once persisted).
    """
    names = list(failure)
    return names[0].rsplit('.', 1)[-1] if names else 'Error'


def _short(value):
    """One word for one value of a result: an outcome, a host, a count."""
    if value is None:
        return 'none'
    if isinstance(value, dict):
        if 'service_host' in value:      # a Selection: where it goes
            return str(value['service_host'])
        return f'{len(value)} item(s)'
    if isinstance(value, (list, tuple)):
        return _short(value[0]) if value else 'none'
    return str(value)


def _per_instance(result):
    """``{instance_uuid: value}`` read as counts: 'ok (2), error (1)'."""
    counts = {}
    for value in result.values():
        word = _short(value)
        counts[word] = counts.get(word, 0) + 1
    words = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if len(result) == 1:
        return words[0][0]
    return (f'{len(result)} instances: ' +
            ', '.join(f'{word} ({count})' for word, count in words))


def _tries(history):
    """A retry controller's history: what each try got and what failed."""
    tries = []
    for provided, failures in history:
        text = _short(provided)
        if failures:
            types = sorted({failure_type(failure)
                            for failure in failures.values()})
            text += f' failed ({", ".join(types)})'
        tries.append(text)
    count = 'one try' if len(tries) == 1 else f'{len(tries)} tries'
    return f'{count}: ' + '; '.join(tries)


def summarize_result(atom_detail):
    """A one-line summary of what an atom returned; None if nothing.

    Per-instance results (``{instance_uuid: outcome}``, how the boot
    flow's atoms work on a batch) become counts of each outcome; a
    selection becomes its host; a retry controller's history lists each
    try. A failed atom has no result: its failure says what happened.
    """
    results = atom_detail.results
    if isinstance(atom_detail, tf_models.RetryDetail):
        text = _tries(results) if results else None
    elif results is None or isinstance(results, tf_failure.Failure):
        text = None
    elif isinstance(results, dict) and results and all(
            uuidutils.is_uuid_like(key) for key in results):
        text = _per_instance(results)
    else:
        text = _short(results)
    if text is not None and len(text) > RESULT_SUMMARY_WIDTH:
        text = text[:RESULT_SUMMARY_WIDTH - 3] + '...'
    return text


def describe_atom(atom_detail):
    """One atom's state, duration and failure, as plain values."""
    failure = atom_detail.failure or atom_detail.revert_failure
    described = None
    if failure is not None:
        described = {
            'type': failure_type(failure),
            'message': _text(failure.exception_str),
        }
    return {
        'name': atom_detail.name,
        'type': type(atom_detail).__name__.replace('Detail', '').lower(),
        'state': atom_detail.state,
        'intention': atom_detail.intention,
        'duration': _seconds((atom_detail.meta or {}).get('duration')),
        'result': summarize_result(atom_detail),
        'failure': described,
    }
