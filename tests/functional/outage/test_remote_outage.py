"""A conductor's ``schedule`` when the scheduler's database goes away.

``cellboot-scheduler`` over a real RabbitMQ, its API database behind a
TCP proxy of the test (``tests.functional.tcp_proxy``). A conductor's
``schedule`` step calls ``select_destinations`` while the proxy is cut:
the scheduler's ``DBConnectionError`` reaches the conductor as
oslo.messaging's ``RemoteError`` naming it (the bus carries only
``cellboot.exception``'s errors as themselves), which the engine takes
for an outage: the step runs again, as a resumed one, until the
scheduler's database is back, and its instance holds one claim.
"""

import logging
import threading

import fixtures
from oslo_utils import uuidutils
from sqlalchemy.engine import url as sa_url
from taskflow.patterns import linear_flow
from taskflow.utils import persistence_utils

from cellboot import context as cb_context
from cellboot.db.api import connection as api_connection
from cellboot.flowrun import engine as flow_engine
from cellboot.objects import cell_mapping
from cellboot.objects import compute_node
from cellboot.objects import service as service_obj
from cellboot import rpc
from cellboot.rpc import topics
from cellboot.scheduler import api as scheduler_api
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


class RabbitSchedulerOutageTest(base.MySQLMixin, base.DatabaseTestCase):

    def setUp(self):
        super().setUp()
        url = sa_url.make_url(self.dbs.api_url)
        self.proxy = tcp_proxy.TCPProxy(url.host or '127.0.0.1',
                                        url.port or 3306).start()
        self.addCleanup(self.proxy.stop)
        self.flags(connection=url.set(host='127.0.0.1', port=self.proxy.port)
                   .render_as_string(hide_password=False),
                   group='api_database')
        api_connection.reset()
        self.flags(host_state_refresh_interval=0, group='scheduler')
        self.url = rpc_base.transport_url('rabbit')
        self.flags(transport_url=self.url)
        self.admin = cb_context.get_admin_context()
        self.cell = cell_mapping.CellMapping.create(
            self.admin, 'cell-' + uuidutils.generate_uuid()[:8],
            self.dbs.cell_urls[0], self.url)
        self.scheduler = scheduler_api.SchedulerAPI()
        self.scheduler.start(self.admin, refresh_interval=0)
        self.addCleanup(self.scheduler.stop)
        buses = self.useFixture(rpc_base.Buses())
        buses.serve('scheduler-1', topics.SCHEDULER,
                    [rpc_endpoint.SchedulerEndpoint(self.scheduler)],
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
        self.client.update_provider(self.ctx, self.node, 'host1',
                                    self.cell.name, INVENTORY, 'nova')
        self.log = self.useFixture(fixtures.FakeLogger(
            name='cellboot.db.outage', level=logging.DEBUG))

    def test_schedule_waits_for_the_scheduler_s_database(self):
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
        self.assertEqual({self.node: FLAVOR_RESOURCES},
                         usage.get_allocations_for_consumer(self.admin,
                                                            instance))
        # What the conductor met: the scheduler's error, over the bus.
        self.assertIn('RemoteError', self.log.output)
        self.assertIn('DBConnectionError', self.log.output)
