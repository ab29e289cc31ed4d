"""The note an operator's abandon leaves on a flow, and who reads it.

``cellboot-manage flows abandon`` and ``POST /os-flows/{id}/action
{"abandon": ...}`` (``cellboot.flowrun.abandoning``) end a flow in
FAILURE and record in its meta, under ``abandoned``::

    {'by': who asked, 'at': ISO 8601 UTC, 'reason': text or None,
     'from_state': the state it was abandoned from}

The flow then holds its instances no longer; the conductors' sweeps
settle them, each with a fault that says an operator abandoned the
flow (``fault_message``): the super conductors' orphan sweep the boot
flow's build requests (``conductor.ended_flows``, without waiting
``[conductor] orphan_build_request_timeout``: the flow did not end on
its own, and nothing will come back for them), the cell conductors'
sweep a reschedule flow's instance (``conductor.abandoned_flows``),
which then records ``settled_at`` in the note.

The note is read back from a row that anyone with the database's
credentials could have written: a note that is not a dict of strings
reads as absent (the flow is then an ordinary FAILURE flow), and so
does a field that is not one line of text (``TEXT_PATTERN``).
"""

import datetime
import re

import sqlalchemy as sa
from oslo_serialization import jsonutils
from oslo_utils import timeutils
from taskflow import states

from cellboot.flowrun import tables

KEY = 'abandoned'
_FIELDS = ('by', 'at', 'reason', 'from_state', 'settled_at')

# Text a note may hold: no control character or line break (Python's
# ``re`` and ECMA-262 read it alike). A field read back with one reads
# as absent: it would reach faults, logs and terminals.
TEXT_PATTERN = r'^[^\u0000-\u001f\u007f-\u009f\u2028\u2029]*$'


def _text(value):
    if isinstance(value, str) and re.match(TEXT_PATTERN, value):
        return value
    return None


def new_note(by, reason, from_state):
    return {'by': by, 'at': timeutils.utcnow().isoformat(),
            'reason': reason, 'from_state': from_state or states.PENDING}


def read(meta):
    """The abandon note of a flow's ``meta``; None if it has none."""
    note = meta.get(KEY) if isinstance(meta, dict) else None
    if not isinstance(note, dict) or _text(note.get('at')) is None:
        return None
    return {field: _text(note.get(field)) for field in _FIELDS}


def moment(note):
    """When the flow was abandoned, a naive UTC datetime; None if unreadable.

    An instance unchanged since then is one the flow left behind.
    """
    try:
        at = datetime.datetime.fromisoformat(note['at'])
    except (TypeError, ValueError):
        return None
    if at.tzinfo is not None:
        at = at.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return at


def fault_message(flow_uuid, note):
    """The fault of an instance a flow abandoned by an operator left."""
    message = (f'An operator ({note["by"]}) abandoned the flow {flow_uuid} '
               f'at {note["at"]} before it finished this build')
    if note.get('reason'):
        message += f': {note["reason"]}'
    return message


def _notes(rows):
    found = {}
    for row in rows:
        try:
            meta = jsonutils.loads(row.meta) if row.meta else None
        except (ValueError, TypeError, RecursionError):
            continue
        note = read(meta)
        if note is not None:
            found[row.uuid] = dict(note, instance_uuids=[
                uuid for uuid in (meta.get('instance_uuids') or ())
                if isinstance(uuid, str)])
    return found


def _abandoned_query():
    """FAILURE flows whose meta mentions the key (refined by ``read``)."""
    return sa.select(tables.FLOWS.c.uuid,
                     sa.cast(tables.FLOWS.c.meta,
                             sa.UnicodeText).label('meta')).where(
        tables.FLOWS.c.state == states.FAILURE,
        sa.cast(tables.FLOWS.c.meta, sa.Text).like(f'%"{KEY}"%'))


def of_flows(engine, flow_uuids):
    """``{flow uuid: note}`` of those of ``flow_uuids`` abandoned."""
    if not flow_uuids:
        return {}
    query = _abandoned_query().where(
        tables.FLOWS.c.uuid.in_(list(flow_uuids)))
    with engine.connect() as conn:
        return _notes(conn.execute(query))


def unsettled(engine):
    """``{flow uuid: note}`` of the abandoned flows not settled yet.

    Each note has the flow's ``instance_uuids`` too. Abandons are rare
    and a settled flow drops out, so this stays a short read.
    """
    with engine.connect() as conn:
        found = _notes(conn.execute(_abandoned_query()))
    return {uuid: note for uuid, note in found.items()
            if not note['settled_at']}


def mark_settled(engine, flow_uuid):
    """Record that the flow's instances are settled (``settled_at``)."""
    def merge(meta):
        if isinstance(meta.get(KEY), dict):
            meta[KEY] = dict(meta[KEY],
                             settled_at=timeutils.utcnow().isoformat())
        return meta
    with engine.begin() as conn:
        tables.merge_flow_meta(conn, flow_uuid, merge)
