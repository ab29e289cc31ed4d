"""Saving a new request's flow once, even across a lost commit.

A request's flow is saved under its deterministic uuid
(``records.flow_uuid``) before anything of it runs or is posted, so
that a repeated cast of one request finds it and neither runs nor posts
it again. The save rides a database outage out (``cellboot.db.outage``)
as the flow's steps do; a retry after a lost connection must then tell
the flow its own earlier attempt saved (the COMMIT happened, the answer
was lost) from one a copy of the cast saved: that is this module.

Apart from ``runner`` because it is a step of its own with its own
reasoning, the runner's ``start`` only deciding what to do with the
flow once saved.
"""

from taskflow import states

from cellboot.db import outage
from cellboot.flowrun import records


def save(kind, store, persistence, key, context, instance_uuids, owner,
         posted, what):
    """``(flow_detail, created)``: the request's flow, saved now or found.

    ``key`` identifies the request (``records.flow_uuid``); ``owner``
    is the saving conductor, ``posted`` whether the flow goes to a
    jobboard rather than being held by it (``records.flow_meta``);
    ``what`` names the request in the outage's log lines.
    """
    meta = records.flow_meta(kind, instance_uuids, context, owner=owner,
                             posted=posted)

    def attempt():
        return records.create(
            kind, store, persistence, uuid_=records.flow_uuid(kind, key),
            book_name=f'{kind} {context.request_id}', meta=meta)

    return outage.ride_out(
        attempt, lambda: _saved_by_lost_attempt(attempt(), owner),
        what=f'{what}: saving its flow')


def _saved_by_lost_attempt(saved, owner):
    """``records.create``'s answer, on a retry after a lost connection.

    A flow found saved already, never started and owned by this
    conductor is the one the attempt before saved (its COMMIT
    happened, its answer was lost): created by this call. Were it
    a copy of the cast this conductor handles too, nothing runs
    twice: a flow is posted once, and run once in a process.
    """
    flow_detail, created = saved
    if (not created and flow_detail.state in (None, states.PENDING)
            and records.owner_of(flow_detail.meta) == owner):
        return flow_detail, True
    return saved
