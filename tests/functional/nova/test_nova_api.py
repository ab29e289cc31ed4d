"""A real nova-api 34 boots servers through cellboot's Nova door.

nova-api (unmodified, from ``.nova-venv``) takes ``POST /servers`` on
its own REST API, writes its rows on MariaDB and casts over RabbitMQ;
the door of a whole cellboot deployment takes the cast, and cellboot
builds the servers under nova-api's uuids. What nova-api shows of them
afterwards needs the mirror of its databases, which cellboot does not
write yet (docs/nova.md): this test checks cellboot's side.
"""

import time

import requests

from cellboot.conductor import nova_door
from cellboot.conf import CONF
from cellboot import exception
from cellboot.nova import casts
from cellboot.objects import fault_messages
from cellboot import rpc
from cellboot import service
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional import cluster
from tests.functional.nova import novaapi
from tests.functional.nova import standins
from tests.functional.rpc import base as rpc_base

BUILT_TIMEOUT = 60


class NovaApiThroughTheDoorTest(base.TestCase):

    def setUp(self):
        super().setUp()
        novaapi.check_venv()
        nova_bus = rpc_base.rabbit_url(vhost='nova-api')
        nova_cell_bus = rpc_base.rabbit_url(vhost='nova-cell1')
        self.cluster = self.useFixture(cluster.Cluster(cells=1,
                                                       hosts_per_cell=2))
        CONF.set_override('transport_url', nova_bus, group='nova')
        door = service.RPCService(
            'door-host', casts.TOPIC,
            [nova_door.NovaDoor(self.cluster.super_conductor)],
            rpc.get_nova_transport(), exchange=CONF.nova.exchange)
        door.start()
        self.addCleanup(door.wait)
        self.addCleanup(door.stop)
        databases = [self.useFixture(cb_fixtures.Database('mysql')).url
                     for _ in range(3)]
        stand_ins = standins.StandIns().start()
        self.addCleanup(stand_ins.stop)
        self.nova = self.useFixture(novaapi.NovaApi(
            *databases, nova_bus, nova_cell_bus, stand_ins.url))

    def _boot(self, **server):
        body = {'name': 'through-nova', 'imageRef': standins.IMAGE_ID,
                'flavorRef': novaapi.FLAVOR, 'networks': 'none'}
        body.update(server)
        answer = self.nova.boot(body)
        self.assertEqual(202, answer.status_code, answer.text)
        return answer.json()

    def _built(self, uuids):
        """``{uuid: (cell name, Instance)}`` once none is building."""
        deadline = time.monotonic() + BUILT_TIMEOUT
        while True:
            try:
                found = {uuid: self.cluster.find(uuid) for uuid in uuids}
                if all(instance.vm_state != 'building'
                       for _cell, instance in found.values()):
                    return {uuid: (cell.name, instance)
                            for uuid, (cell, instance) in found.items()}
            except exception.InstanceNotFound:
                pass
            if time.monotonic() > deadline:
                self.fail(f'not built within {BUILT_TIMEOUT} s; nova-api '
                          f'log:\n{self.nova.log()[-3000:]}')
            time.sleep(0.2)

    def _ids_of(self, reservation_id):
        answer = requests.get(
            f'{self.nova.url}/servers?reservation_id={reservation_id}',
            headers=novaapi.headers(), timeout=30)
        self.assertEqual(200, answer.status_code, answer.text)
        return sorted(server['id'] for server in answer.json()['servers'])

    def test_single_and_multi_create_are_built_under_nova_s_uuids(self):
        single = self._boot(name='web-1', metadata={'role': 'web'})
        reservation = self._boot(name='batch', min_count=3, max_count=3,
                                 return_reservation_id=True)
        uuid = single['server']['id']
        ((cell, instance),) = self._built([uuid]).values()
        self.assertEqual(('cell1', 'active'), (cell, instance.vm_state))
        self.assertEqual('web-1', instance.display_name)
        self.assertEqual({'role': 'web'}, instance.metadata)
        batch = self._ids_of(reservation['reservation_id'])
        self.assertEqual(3, len(batch))
        built = self._built(batch)
        self.assertEqual(
            [('cell1', 'active', reservation['reservation_id'])] * 3,
            [(cell, instance.vm_state, instance.reservation_id)
             for cell, instance in built.values()])
        self.assertEqual(['batch-1', 'batch-2', 'batch-3'], sorted(
            instance.display_name for _cell, instance in built.values()))

    def test_a_flavor_no_host_fits_ends_in_error_with_a_fault(self):
        self.nova.create_flavor('huge', vcpus=1024)
        server = self._boot(name='too-big', flavorRef='huge')
        uuid = server['server']['id']
        (cell, instance), = self._built([uuid]).values()
        self.assertEqual(('cell0', 'error'), (cell, instance.vm_state))
        self.assertEqual(fault_messages.NO_VALID_HOST,
                         self.cluster.fault(uuid).message)
