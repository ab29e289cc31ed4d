"""A conductor's ``schedule`` when a cell's database goes away.

Both levels of ``cellboot-scheduler`` over a real RabbitMQ: the API
level's (``CellsScheduler`` behind ``SchedulerEndpoint``) and the cell's
(``CellScheduler`` over the service's ``[database] connection``, behind
``CellSchedulerEndpoint`` on the cell's bus). The cell's database, where
its resources live and its aggregate is published, is behind a TCP
proxy of the test (``tests.functional.tcp_proxy``). A conductor's
``schedule`` step calls ``select_destinations`` while the proxy is cut:
the cell's scheduler cannot claim, so the API level finds no cell that
answers (``CellsUnavailable``, which crosses the bus as itself), which
the engine takes for an outage: the step runs again, as a resumed one,
until the cell's database is back, and its instance holds one claim.
"""

import logging
import threading

import fixtures
from oslo_utils import uuidutils
from sqlalchemy.engine import url as sa_url
from taskflow.patterns import linear_flow
from taskflow.utils import persistence_utils

from cellboot import context as cb_context
from cellboot.db.cell import connection as cell_connection
from cellboot.flowrun import engine as flow_engine
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from cellboot.objects import service as service_obj
from cellboot import rpc
from cellboot.rpc import topics
from cellboot.scheduler import api as scheduler_api
from cellboot.scheduler import cells as cells_scheduler
from cellboot.scheduler import host_state_cache
from cellboot.scheduler import rpc_endpoint
from cellboot.scheduler import rpcapi as scheduler_rpcapi
from cellboot.scheduler.resources import usage
from cellboot.workflows.tasks import schedule
from tests import base
from tests.functional.outage import base as outage_base
from tests.functional.rpc import base as rpc_base
from tests.functional import tcp_proxy

INVENTORY = {'VCPU': {'total': 4}, 'MEMORY_MB': {'total': 4096},
             'DISK_GB': {'total': 40}}
FLAVOR = {'vcpus': 1, 'memory_mb': 512, 'root_gb': 1}
FLAVOR_RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


class RabbitCellDatabaseOutageTest(base.MySQLMixin, base.DatabaseTestCase):

    def setUp(self):
        super().setUp()
        url = sa_url.make_url(self.dbs.cell_urls[0])
        self.proxy = tcp_proxy.TCPProxy(url.host or '127.0.0.1',
                                        url.port or 3306).start()
        self.addCleanup(self.proxy.stop)
        proxied = url.set(host='127.0.0.1', port=self.proxy.port
                          ).render_as_string(hide_password=False)
        # The cell's scheduler's own database, and the cell's mapping.
        self.flags(connection=proxied, group='database')
        cell_connection.reset()
        self.flags(host_state_refresh_interval=0, group='scheduler')
        self.flags(cell_call_timeout=5, group='scheduler')
        self.url = rpc_base.transport_url('rabbit')
        self.flags(transport_url=self.url)
        self.admin = cb_context.get_admin_context()
        self.cell = cell_mapping.CellMapping.create(
            self.admin, 'cell-' + uuidutils.generate_uuid()[:8], proxied,
            self.url)
        self.cell_scheduler = scheduler_api.CellScheduler(
            host_state_cache.CellScope(self.cell.name), name='scheduler-1')
        self.cell_scheduler.start(self.admin, refresh_interval=0)
        self.addCleanup(self.cell_scheduler.stop)
        self.top = cells_scheduler.CellsScheduler()
        self.top.start(self.admin, refresh_interval=0)
        self.addCleanup(self.top.stop)
        buses = self.useFixture(rpc_base.Buses())
        buses.serve('scheduler-1', topics.scheduler(self.cell.name),
                    [rpc_endpoint.CellSchedulerEndpoint(self.cell_scheduler)],
                    rpc.get_cell_transport(self.cell))
        buses.serve('scheduler-api', topics.SCHEDULER,
                    [rpc_endpoint.SchedulerEndpoint(self.top)],
                    rpc.get_transport(self.url))
        self.client = scheduler_rpcapi.SchedulerRPCAPI(
            rpc.get_transport(self.url))
        self.ctx = rpc_base.user_context()
        self.node = uuidutils.generate_uuid()
        with cb_context.target_cell(self.admin, self.cell) as cctxt:
            compute_node.ComputeNode.create(cctxt, 'host1', 'host1', 4, 4096,
                                            40, uuid=self.node)
            service_obj.Service.create(
                cctxt, 'host1', host_state_cache.COMPUTE_BINARY).report_up(
                cctxt)
        scheduler_rpcapi.CellSchedulerRPCAPI(
            rpc.get_cell_transport(self.cell), self.cell.name
        ).update_provider(self.ctx, self.node, 'host1', self.cell.name,
                          INVENTORY, 'nova')
        self.top.refresh(self.admin)
        self.log = self.useFixture(fixtures.FakeLogger(
            name='cellboot', level=logging.DEBUG))

    def test_schedule_waits_for_the_cells_database(self):
        instance = uuidutils.generate_uuid()
        flow = linear_flow.Flow('boot').add(schedule.Schedule(
            'schedule', provides='selections',
            requires=('request_spec', 'instance_uuids')))
        engine = flow_engine.CellbootEngine(
            flow, persistence_utils.create_flow_detail(flow), None, {})
        engine.storage.inject({'request_spec': {'flavor': FLAVOR},
                               'instance_uuids': [instance],
                               'build_requests': {}})
        engine.storage.inject({'context': self.ctx,
                               'scheduler': self.client}, transient=True)
        self.proxy.cut()
        timer = threading.Timer(outage_base.OUTAGE_SECONDS,
                                self.proxy.restore)
        self.addCleanup(timer.cancel)
        timer.start()

        engine.run()

        [chosen] = engine.storage.get('schedule')[instance]
        self.assertEqual(self.node, chosen['compute_node_uuid'])
        with cb_context.target_cell(self.admin, self.cell) as cctxt:
            self.assertEqual({self.node: FLAVOR_RESOURCES},
                             usage.get_allocations_for_consumer(cctxt,
                                                                instance))
        # What the conductor met: no cell that answers, over the bus.
        self.assertIn('No cell could be asked to place the request',
                      self.log.output)
