"""The devstack plugin's door mode, beside a real nova-api 34.

``CELLBOOT_NOVA_DOOR=True`` deploys cellboot as ``test_plugin`` does,
with the super conductor also serving nova-api's conductor topic on the
harness's bus (devstack's) and mirroring into nova-api's databases. A
real nova-api (``.nova-venv``) is set up on that bus and on databases of
its own, as devstack's would be; a server booted through nova-api's REST
API must be ACTIVE there, built by cellboot (its boot flow, read with
``cellboot-manage flows show``), and once deleted through nova-api, gone
in cellboot too.
"""

import configparser
import os
import subprocess
import time

import requests
import testtools

from tests import fixtures as cb_fixtures
from tests.functional.devstack import stack
from tests.functional.multiprocess import rabbit
from tests.functional.nova import novaapi
from tests.functional.nova import standins

# Seconds nova-api may take to show a server ACTIVE, or gone.
TIMEOUT = 60


def _cellboot_conf(run):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(run.conf)
    return parser


class NovaDoorModeTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        novaapi.check_venv()
        self.run = self.useFixture(stack.Stack(self))
        self.databases = [self.useFixture(cb_fixtures.Database('mysql'))
                          for _ in range(3)]
        self.env = {'CELLBOOT_NOVA_DOOR': 'True',
                    'CELLBOOT_NOVA_API_DB': self.databases[0].name}

    def _nova_api(self):
        """nova-api on the bus the plugin gave cellboot's API level."""
        stand_ins = standins.StandIns().start()
        self.addCleanup(stand_ins.stop)
        bus = _cellboot_conf(self.run)['DEFAULT']['transport_url']
        cell_bus = self.useFixture(rabbit.Vhost()).url
        return self.useFixture(novaapi.NovaApi(
            *[database.url for database in self.databases], bus, cell_bus,
            stand_ins.url))

    def _shown(self, nova, uuid, until):
        deadline = time.monotonic() + TIMEOUT
        while True:
            answer = requests.get(f'{nova.url}/servers/{uuid}',
                                  headers=novaapi.headers(), timeout=30)
            self.assertIn(answer.status_code, (200, 404), answer.text)
            if until(answer):
                return answer
            if time.monotonic() > deadline:
                self.fail(f'nova-api shows {answer.status_code} '
                          f'{answer.text}; its log:\n{nova.log()[-3000:]}')
            time.sleep(0.3)

    def test_nova_api_boots_and_deletes_through_the_door(self):
        self.run.harness('stack', env=self.env)
        nova = self._nova_api()
        conf = _cellboot_conf(self.run)
        self.assertEqual('True', conf['nova']['enabled'])
        self.assertTrue(conf['nova']['api_database_connection'].endswith(
            f'/{self.databases[0].name}?charset=utf8mb4'))

        answer = nova.boot({'name': 'via-nova', 'imageRef': standins.IMAGE_ID,
                            'flavorRef': novaapi.FLAVOR, 'networks': 'none'})
        self.assertEqual(202, answer.status_code, answer.text)
        uuid = answer.json()['server']['id']
        shown = self._shown(nova, uuid, lambda answer: answer.json().get(
            'server', {}).get('status') not in (None, 'BUILD'))
        self.assertEqual('ACTIVE', shown.json()['server']['status'])
        flows = subprocess.run(
            [os.path.join(stack.VENV_BIN, 'cellboot-manage'), '--config-file',
             self.run.conf, 'flows', 'show', uuid],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(0, flows.returncode, flows.stderr)
        self.assertIn('(boot): SUCCESS', flows.stdout)

        deleted = requests.delete(f'{nova.url}/servers/{uuid}',
                                  headers=novaapi.headers(), timeout=30)
        self.assertEqual(204, deleted.status_code, deleted.text)
        self._shown(nova, uuid, lambda answer: answer.status_code == 404)
        owner = f'{novaapi.USER}:{novaapi.PROJECT}'
        deadline = time.monotonic() + TIMEOUT
        while requests.get(f'{self.run.api_url}/servers/{uuid}',
                           headers={'X-Auth-Token': owner},
                           timeout=30).status_code != 404:
            self.assertLess(time.monotonic(), deadline,
                            f'server {uuid} is still there in cellboot')
            time.sleep(0.3)
        self.run.harness('unstack', env=self.env)
        self.run.harness('clean', env=self.env)
        self.assertEqual([], self.run.databases())

    def test_a_door_setting_that_is_not_true_or_false_stops_stack(self):
        result = self.run.harness('stack', check=False,
                                  env={'CELLBOOT_NOVA_DOOR': 'yes'})
        self.assertNotEqual(0, result.returncode)
        self.assertIn("cellboot: CELLBOOT_NOVA_DOOR is 'yes'; use True or "
                      "False", result.stderr)
        self.assertEqual({}, self.run.pid_files())
