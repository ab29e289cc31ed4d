"""What a chaos test reads of a deployment: is it quiet, how did it end.

Quiescence is the state the invariant checker needs
(docs/architecture.md, Invariants: "at every quiet point"): no build
request left, no live instance in BUILD, no flow unfinished in the flow
database or any cell, and no job on any jobboard of the deployment.
Everything is read from the databases and from Redis, the way an
operator's tools would, never from a service's
memory: the services are the thing under test, and some are dead.
"""

import collections
import dataclasses

import sqlalchemy as sa

from cellboot import context as cb_context
from cellboot.db.api import connection as api_connection
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot.flowrun import lookup
from tests.functional import invariants

_API = api_models.Base.metadata.tables
_CELL = cell_models.Base.metadata.tables

KIND_RESCHEDULE = 'reschedule'
KIND_CROSS_CELL = 'cross-cell'

# TaskFlow's Redis jobboard keeps a board's jobs in one hash whose key
# ends so (``<board namespace>:listings``).
_LISTINGS_SUFFIX = b'listings'


def _rows(engine, query):
    with engine.connect() as conn:
        return conn.execute(query).all()


def cell_urls():
    """{cell name: database URL} of every mapped cell, cell0 included."""
    cells = _API['cell_mappings']
    return {row.name: row.database_connection for row in _rows(
        api_connection.get_engine(),
        sa.select(cells.c.name, cells.c.database_connection))}


def build_requests_left():
    return len(_rows(api_connection.get_engine(), sa.select(
        _API['build_requests'].c.instance_uuid)))


def instance_states():
    """Counter of the live instances' vm_state, over every cell."""
    instances = _CELL['instances']
    counts = collections.Counter()
    for url in cell_urls().values():
        for row in _rows(cell_connection.get_engine(url), sa.select(
                instances.c.vm_state).where(instances.c.deleted == 0)):
            counts[row.vm_state] += 1
    return counts


def flows():
    """Summaries of every persisted flow, flow database and cells."""
    return lookup.find_flows_everywhere(cb_context.get_admin_context())


def jobs_on_boards(redis_client, namespace):
    """{listings key: number of jobs} of the boards under ``namespace``."""
    found = {}
    for key in redis_client.scan_iter(match=f'{namespace}*'):
        if key.endswith(_LISTINGS_SUFFIX) and \
                redis_client.type(key) == b'hash':
            found[key.decode()] = redis_client.hlen(key)
    return found


@dataclasses.dataclass
class Quiet:
    """One look at what is still in flight; ``quiet`` when nothing is."""

    build_requests: int
    building: int
    unfinished_flows: list
    jobs: dict

    @property
    def quiet(self):
        return (not self.build_requests and not self.building and
                not self.unfinished_flows and not any(self.jobs.values()))

    def __str__(self):
        flows_left = [(flow['kind'], flow['uuid'], flow['state'],
                       flow['location']) for flow in self.unfinished_flows]
        return (f'{self.build_requests} build request(s) left, '
                f'{self.building} instance(s) building, unfinished flows '
                f'{flows_left}, jobs on the boards {self.jobs}')


def look(redis_client=None, namespace=None):
    """What is in flight now (jobs only when a Redis board is given)."""
    unfinished = [flow for flow in flows()
                  if flow['state'] not in invariants.FINISHED_FLOW_STATES]
    jobs = {}
    if redis_client is not None:
        jobs = jobs_on_boards(redis_client, namespace)
    return Quiet(build_requests_left(),
                 instance_states().get('building', 0), unfinished, jobs)


def resumed_flows(all_flows):
    """The flows some conductor took over after another had run them."""
    return [flow for flow in all_flows if flow['meta'].get('resumptions')]


def missing(instance_uuids):
    """What became of accepted servers that no cell holds alive.

    One line per such server: whether its build request and instance
    mapping are still there, and the flows that name it, with their
    states; what a failed run needs to tell where a build was lost.
    """
    live = set()
    instances = _CELL['instances']
    for url in cell_urls().values():
        live.update(row.uuid for row in _rows(
            cell_connection.get_engine(url),
            sa.select(instances.c.uuid).where(instances.c.deleted == 0)))
    api = api_connection.get_engine()
    requests_left = {row.instance_uuid for row in _rows(
        api, sa.select(_API['build_requests'].c.instance_uuid))}
    mapped = {row.instance_uuid for row in _rows(
        api, sa.select(_API['instance_mappings'].c.instance_uuid))}
    all_flows = flows()
    lines = []
    for uuid in sorted(set(instance_uuids) - live):
        named_by = [f'{flow["kind"]} {flow["uuid"]} {flow["state"]}'
                    for flow in all_flows if uuid in flow['instance_uuids']]
        lines.append(f'{uuid}: build request '
                     f'{"left" if uuid in requests_left else "gone"}, '
                     f'mapping {"left" if uuid in mapped else "gone"}, '
                     f'flows {named_by or "none"}')
    return lines


def reschedule_flows(all_flows):
    """One flow per reschedule (keyed by instance and attempt)."""
    return [flow for flow in all_flows if flow['kind'] == KIND_RESCHEDULE]


def cross_cell_flows(all_flows):
    """One flow per move of a build to another cell."""
    return [flow for flow in all_flows if flow['kind'] == KIND_CROSS_CELL]
