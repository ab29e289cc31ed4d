"""What the sweepers' tests share. Not a test module."""

import datetime
import subprocess
import threading

from oslo_utils import timeutils
import sqlalchemy as sa
from taskflow.persistence.backends.sqlalchemy import tables as tf_tables

from cellboot import context as cb_context
from cellboot.flowrun import backend as flow_db

_FLOWS = tf_tables.fetch(sa.MetaData()).flowdetails


def sweep_at_once(checks):
    """Run the checks' ``sweep_once`` at the same moment; their results.

    As several conductor processes sweeping on the same tick would.
    """
    barrier = threading.Barrier(len(checks))
    results = []

    def sweep(check):
        barrier.wait()
        results.append(check.sweep_once(cb_context.get_admin_context()))

    threads = [threading.Thread(target=sweep, args=(check,))
               for check in checks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def timeouts(timed_out):
    """What ``BuildTimeouts.sweep_once`` returns when it re-sent nothing."""
    return {'timed_out': timed_out, 'recast': 0, 'reschedule': 0}


def ago(seconds):
    """ISO 8601 (naive UTC, as flow meta has it) of ``seconds`` ago."""
    return (timeutils.utcnow() -
            datetime.timedelta(seconds=seconds)).isoformat()


def update_flow_meta(persistence, flow_uuid, **values):
    """Set ``values`` in the meta of flow ``flow_uuid``.

    As if it had been written so: a test ages a flow (``started_at``,
    ``owned_since``, see ``ago``) rather than wait out a sweep's timeout.
    """
    backend = flow_db.get_backend(persistence)
    with backend.engine.begin() as conn:
        meta = conn.execute(sa.select(_FLOWS.c.meta).where(
            _FLOWS.c.uuid == flow_uuid)).scalar()
        conn.execute(sa.update(_FLOWS).where(
            _FLOWS.c.uuid == flow_uuid).values(meta=dict(meta, **values)))


def dead_pid():
    """The pid of a process that has ended (a killed conductor's)."""
    child = subprocess.Popen(['true'])
    child.wait()
    return child.pid
