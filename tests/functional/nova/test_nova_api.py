"""A real nova-api 34 boots servers through cellboot's Nova door.

nova-api (unmodified, from ``.nova-venv``) takes ``POST /servers`` on
its own REST API, writes its rows on MariaDB and casts over RabbitMQ;
the door of a whole cellboot deployment takes the cast, and cellboot
builds the servers under nova-api's uuids; the Nova mirror writes what
Nova's conductor and compute would have written in nova-api's
databases. Each test checks both sides: cellboot's instances, claims
and faults, and what nova-api's own REST API answers about them.
"""

import time

import requests

from cellboot.conductor import nova_door
from cellboot.conductor import nova_mirror
from cellboot.conf import CONF
from cellboot import exception
from cellboot.nova import casts
from cellboot.objects import fault_messages
from cellboot import rpc
from cellboot import service
from tests import base
from tests import fixtures as cb_fixtures
from tests.functional import cluster
from tests.functional import invariants
from tests.functional.nova import nova_view
from tests.functional.nova import novaapi
from tests.functional.nova import standins
from tests.functional.rpc import base as rpc_base

BUILT_TIMEOUT = 60

# The bigger host is the scheduler's first choice (the RAM weigher
# spreads): a build that fails there is rescheduled to cell1-host2.
BIG_HOST1 = {'cell1-host1': {'memory_mb': 16384}}


class NovaApiThroughTheDoorTest(base.TestCase):

    def setUp(self):
        super().setUp()
        novaapi.check_venv()
        nova_bus = rpc_base.rabbit_url(vhost='nova-api')
        nova_cell_bus = rpc_base.rabbit_url(vhost='nova-cell1')
        self.cluster = self.useFixture(cluster.Cluster(
            cells=1, hosts_per_cell=2, host_capacity=BIG_HOST1))
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
        self.nova_api_db = databases[0]
        stand_ins = standins.StandIns().start()
        self.addCleanup(stand_ins.stop)
        self.nova = self.useFixture(novaapi.NovaApi(
            *databases, nova_bus, nova_cell_bus, stand_ins.url))
        CONF.set_override('mirror_interval', 0.2, group='nova')
        mirror = nova_mirror.MirrorService(self.cluster.super_conductor,
                                           databases[0])
        mirror.start()
        self.addCleanup(mirror.stop)

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

    def _shown(self, uuid):
        """nova-api's GET of the server, as an admin: (status, body)."""
        answer = requests.get(f'{self.nova.url}/servers/{uuid}',
                              headers=novaapi.headers(admin=True),
                              timeout=30)
        self.assertIn(answer.status_code, (200, 404), answer.text)
        return answer.status_code, answer.json()

    def _in_nova(self, uuids, until):
        """nova-api's view of each server once ``until(status, server)``
        holds for all of them: ``{uuid: server}`` (None: 404)."""
        deadline = time.monotonic() + BUILT_TIMEOUT
        while True:
            shown = {}
            for uuid in uuids:
                status, body = self._shown(uuid)
                shown[uuid] = body.get('server') if status == 200 else None
            if all(until(server) for server in shown.values()):
                return shown
            if time.monotonic() > deadline:
                self.fail(f'nova-api shows {shown} after {BUILT_TIMEOUT} '
                          f's; its log:\n{self.nova.log()[-3000:]}')
            time.sleep(0.2)

    def _settled_in_nova(self, uuids):
        return self._in_nova(uuids, lambda server: server is not None and
                             server['status'] != 'BUILD')

    def _quiet_and_true(self):
        """Both sides quiet; every invariant of both, and of the mirror."""
        self.cluster.wait_for_quiet()
        self.assertEqual([], invariants.check_invariants())
        self.assertEqual([], nova_view.check(self.nova_api_db))

    def _delete(self, uuid):
        answer = requests.delete(f'{self.nova.url}/servers/{uuid}',
                                 headers=novaapi.headers(), timeout=30)
        self.assertEqual(204, answer.status_code,
                         f'{answer.text}\nnova-api log:\n'
                         f'{self.nova.log()[-4000:]}')

    def _gone_everywhere(self, uuid):
        """Wait until nova-api answers 404 and cellboot has deleted it."""
        self._in_nova([uuid], lambda server: server is None)
        deadline = time.monotonic() + BUILT_TIMEOUT
        while True:
            try:
                _cell, instance = self.cluster.find(uuid)
                deleted = instance.deleted
            except exception.InstanceNotFound:
                deleted = True   # deleted while a build request
            if deleted and not self.cluster.allocations(uuid):
                return
            if time.monotonic() > deadline:
                self.fail(f'server {uuid} is not deleted in cellboot')
            time.sleep(0.2)

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
        shown = self._settled_in_nova([uuid] + batch)
        for server_uuid, server in shown.items():
            _cell, instance = self.cluster.find(server_uuid)
            self.assertEqual(
                ('ACTIVE', 'active', None, 1, instance.host,
                 instance.node, 'nova-project', 'nova-user', 'm1.tiny'),
                (server['status'], server['OS-EXT-STS:vm_state'],
                 server['OS-EXT-STS:task_state'],
                 server['OS-EXT-STS:power_state'],
                 server['OS-EXT-SRV-ATTR:host'],
                 server['OS-EXT-SRV-ATTR:hypervisor_hostname'],
                 server['tenant_id'], server['user_id'],
                 server['flavor']['original_name']))
            self.assertTrue(server['hostId'])
            self.assertIsNotNone(server['OS-SRV-USG:launched_at'])
        self.assertEqual(('web-1', {'role': 'web'}),
                         (shown[uuid]['name'], shown[uuid]['metadata']))
        self.assertEqual(['batch-1', 'batch-2', 'batch-3'], sorted(
            shown[server]['name'] for server in batch))
        self._quiet_and_true()

    def test_a_flavor_no_host_fits_ends_in_error_with_a_fault(self):
        self.nova.create_flavor('huge', vcpus=1024)
        server = self._boot(name='too-big', flavorRef='huge')
        uuid = server['server']['id']
        (cell, instance), = self._built([uuid]).values()
        self.assertEqual(('cell0', 'error'), (cell, instance.vm_state))
        self.assertEqual(fault_messages.NO_VALID_HOST,
                         self.cluster.fault(uuid).message)
        (server,) = self._settled_in_nova([uuid]).values()
        self.assertEqual(('ERROR', 'error', None),
                         (server['status'], server['OS-EXT-STS:vm_state'],
                          server['OS-EXT-SRV-ATTR:host']))
        self.assertEqual(fault_messages.NO_VALID_HOST,
                         server['fault']['message'])
        self._quiet_and_true()

    def test_a_build_failed_on_its_host_is_rescheduled_and_active(self):
        self.flags(fail_hosts=['cell1-host1'], group='fake_driver')
        uuid = self._boot(name='second-try')['server']['id']
        (server,) = self._settled_in_nova([uuid]).values()
        self.assertEqual(('ACTIVE', 'cell1-host2'),
                         (server['status'], server['OS-EXT-SRV-ATTR:host']))
        kinds = {flow['kind']: flow['state']
                 for flow in self.cluster.flows(uuid)}
        self.assertEqual('SUCCESS', kinds.get('reschedule'), kinds)
        self._quiet_and_true()

    def test_an_anti_affinity_group_spreads_its_servers(self):
        group = self.nova.create_server_group(
            {'server_group': {'name': 'spread', 'policy': 'anti-affinity'}})
        answer = self.nova.boot(
            {'name': 'spread', 'imageRef': standins.IMAGE_ID,
             'flavorRef': novaapi.FLAVOR, 'networks': 'none',
             'min_count': 2, 'max_count': 2, 'return_reservation_id': True},
            hints={'group': group})
        self.assertEqual(202, answer.status_code, answer.text)
        uuids = self._ids_of(answer.json()['reservation_id'])
        shown = self._settled_in_nova(uuids)
        self.assertEqual(['ACTIVE', 'ACTIVE'],
                         [server['status'] for server in shown.values()])
        self.assertEqual({'cell1-host1', 'cell1-host2'}, {
            server['OS-EXT-SRV-ATTR:host'] for server in shown.values()})
        self._quiet_and_true()

    def test_delete_after_active_releases_the_claims(self):
        uuid = self._boot(name='short-lived')['server']['id']
        self._settled_in_nova([uuid])
        self.assertTrue(self.cluster.allocations(uuid))
        self._delete(uuid)
        self._gone_everywhere(uuid)
        self._quiet_and_true()

    def test_delete_while_build_ends_the_build(self):
        # Slow builds: one server is deleted while still a build request
        # in nova-api (at once), one while its host spawns it.
        self.flags(spawn_time=2, group='fake_driver')
        early = self._boot(name='early')['server']['id']
        self._delete(early)
        late = self._boot(name='late')['server']['id']
        self._in_nova([late], lambda server: server is not None and
                      server['OS-EXT-STS:task_state'] == 'spawning')
        self._delete(late)
        self._gone_everywhere(early)
        self._gone_everywhere(late)
        self._quiet_and_true()
