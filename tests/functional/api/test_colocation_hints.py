"""``near`` and ``far`` through the API, on every backend.

Two cells of two hosts each and a DISK_GB pool serving cell2 only. An
allocation of project-a placed on that pool (its row of
``allocation_requests`` and its pool claim written here, as
``/os-allocations`` writes them): a server ``near`` it lands in cell2,
one ``far`` from it in cell1, every time. An allocation placed on a host
draws a server ``near`` it onto that very host. A server ``near``
another project's allocation fares exactly as one near an unknown uuid;
a hint that is no uuid is a 400 that writes nothing. A host that cannot
take the server is only preferred: another host of its cell takes it.
"""

from oslo_utils import uuidutils
import sqlalchemy as sa

from cellboot.db.api import connection as api_connection
from cellboot.db.api import models as api_models
from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from cellboot.objects import build_request
from cellboot.objects import cell_mapping
from cellboot.scheduler import colocation
from cellboot.scheduler.pools import claims as pool_claims
from cellboot.scheduler.pools import records
from tests import base
from tests.functional.api import fixtures as api_fixtures

_ROWS = api_models.AllocationRequest.__table__


class _ColocationBase:

    # Arguments of the cluster behind the API (tests.functional.cluster).
    CLUSTER = {}

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.APIServer(
            cells=2, hosts_per_cell=2, backend=self.BACKEND,
            **self.CLUSTER))
        self.cluster = self.api.cluster
        self.ctx = self.cluster.ctx
        self.alice = self.api.client(api_fixtures.ALICE_TOKEN)
        self.bob = self.api.client(api_fixtures.BOB_TOKEN)
        self.admin = self.api.client(api_fixtures.ADMIN_TOKEN)
        self.pool = records.create_pool(self.ctx, 'cell2-disk',
                                        {'DISK_GB': {'total': 100}},
                                        cells=['cell2'])
        self.cluster.scheduler.pools.invalidate()

    def allocation(self, project_id, provider_uuid, kind='pool',
                   cell=None, status='placed'):
        """An allocation row as ``/os-allocations`` leaves it; a pool
        one holds its claim too."""
        uuid = uuidutils.generate_uuid()
        cell_id = None if cell is None else \
            cell_mapping.CellMapping.get_by_name(self.ctx, cell).id
        with api_connection.get_engine().begin() as conn:
            conn.execute(_ROWS.insert().values(
                uuid=uuid, project_id=project_id, user_id='someone',
                request='{}', status=status, provider_uuid=provider_uuid,
                provider_kind=kind, cell_id=cell_id))
        if kind == 'pool':
            pool_claims.claim(self.ctx, uuid, [{
                'uuid': provider_uuid, 'resources': {'DISK_GB': 5}}])
        return uuid

    def boot(self, client, hints):
        response = client.boot(**{'os:scheduler_hints': hints})
        self.assertEqual(202, response.status_code, response.text)
        self.cluster.wait_for_quiet()
        return response.json()['server']['id']

    def landed(self, uuid):
        where, instance = self.cluster.find(uuid)
        return where.name, instance.vm_state


class _ColocationTests(_ColocationBase):

    def test_near_a_pool_allocation_is_a_cell_it_serves_far_is_not(self):
        mine = self.allocation('project-a', self.pool['uuid'])
        near = [self.landed(self.boot(self.alice, {'near': mine}))
                for _ in range(3)]
        far = [self.landed(self.boot(self.alice, {'far': [mine]}))
               for _ in range(3)]
        self.assertEqual(([('cell2', 'active')] * 3,
                          [('cell1', 'active')] * 3), (near, far))

    def test_what_an_allocation_near_a_server_may_use(self):
        # What /os-allocations reads: a server in cell2 is near the pool
        # serving cell2; one in cell1 is near no pool, and far from it
        # keeps every pool.
        mine = self.allocation('project-a', self.pool['uuid'])
        in2 = self.boot(self.alice, {'near': mine})
        in1 = self.boot(self.alice, {'far': mine})
        cell2 = self.cluster.cell_by_name('cell2').uuid
        near2 = colocation.constraints(self.ctx, 'project-a', near=[in2])
        near1 = colocation.constraints(self.ctx, 'project-a', near=[in1])
        far1 = colocation.constraints(self.ctx, 'project-a', far=[in1])
        self.assertEqual(
            (frozenset([cell2]), frozenset([self.pool['uuid']]),
             frozenset(), True, False),
            (near2.cells_in, near2.pools_in, near1.pools_in,
             far1.allows_pool(self.pool['uuid']), far1.allows_cell(
                 self.cluster.cell_by_name('cell1').uuid)))
        # Not project-b's to name.
        theirs = colocation.constraints(self.ctx, 'project-b', near=[in2])
        self.assertEqual(frozenset(), theirs.cells_in)

    def test_near_a_host_allocation_is_that_host(self):
        first = self.boot(self.admin, {'target_cell': 'cell1'})
        (host,) = self.cluster.allocations(first)
        mine = self.allocation('project-a', host, kind='host', cell='cell1')
        hosts = [list(self.cluster.allocations(
            self.boot(self.alice, {'near': mine}))) for _ in range(3)]
        self.assertEqual([[host]] * 3, hosts)

    def test_near_a_server_is_its_cell(self):
        server = self.boot(self.alice, {'far': self.allocation(
            'project-a', self.pool['uuid'])})
        self.assertEqual(('cell1', 'active'), self.landed(server))
        near = self.boot(self.alice, {'near': server})
        self.assertEqual(('cell1', 'active'), self.landed(near))

    def test_another_projects_allocation_is_as_unknown(self):
        theirs = self.allocation('project-b', self.pool['uuid'])
        placing = self.allocation('project-a', self.pool['uuid'],
                                  status='placing')
        unknown = uuidutils.generate_uuid()
        shown = []
        for uuid in (theirs, placing, unknown):
            mine = self.boot(self.alice, {'near': [uuid]})
            server = self.alice.get(f'/servers/{mine}').json()['server']
            shown.append((server['status'], server['fault']['message']))
        self.assertEqual([shown[2]] * 3, shown)
        self.assertEqual('ERROR', shown[0][0])
        # ``far`` from any of them avoids nothing: both cells stay open.
        found = colocation.constraints(self.ctx, 'project-a', far=[theirs])
        self.assertEqual(colocation.Constraints(), found)

    def test_a_hint_that_is_no_uuid_is_400_and_writes_nothing(self):
        for bad in ('', 'x' * 37, 7, ['not-a-uuid'], [], [None],
                    [uuidutils.generate_uuid()] * 65, {'a': 1}):
            for name in ('near', 'far'):
                response = self.alice.boot(**{'os:scheduler_hints': {
                    name: bad}})
                self.assertEqual(400, response.status_code, (name, bad))
        self.assertEqual([], build_request.BuildRequest.get_by_project(
            self.ctx, 'project-a'))


class FullHostTest(_ColocationBase, base.SQLiteMixin, base.TestCase):
    """cell1-host1 has room for one server only."""

    CLUSTER = {'host_capacity': {'cell1-host1': {'memory_mb': 600}}}

    def provider(self, cell, host):
        cell = self.cluster.cell_by_name(cell)
        table = cell_models.ResourceProvider.__table__
        engine = cell_connection.get_engine(cell.database_connection)
        with engine.connect() as conn:
            return conn.execute(sa.select(table.c.uuid).where(
                table.c.name == host)).scalar_one()

    def test_a_host_that_cannot_take_it_leaves_its_cell_to_choose(self):
        host = self.provider('cell1', 'cell1-host1')
        other = self.provider('cell1', 'cell1-host2')
        mine = self.allocation('project-a', host, kind='host', cell='cell1')
        found = [list(self.cluster.allocations(
            self.boot(self.alice, {'near': mine}))) for _ in range(3)]
        self.assertEqual([[host], [other], [other]], found)


class SQLiteColocationTest(_ColocationTests, base.SQLiteMixin,
                           base.TestCase):
    pass


class MySQLColocationTest(_ColocationTests, base.MySQLMixin, base.TestCase):
    pass


class PostgreSQLColocationTest(_ColocationTests, base.PostgreSQLMixin,
                               base.TestCase):
    pass
