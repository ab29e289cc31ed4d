"""Capture the casts a real nova-api 34 sends its conductor, as test data.

The Nova door must decode what nova-api really sends, not what we think
it sends. This tool runs an unmodified nova-api (from ``.nova-venv``:
``make nova-venv``) on MariaDB and RabbitMQ with stand-ins for Glance,
Neutron and Placement (``tests/functional/nova``), binds a queue of its
own to Nova's ``conductor`` topic, boots a few servers through nova-api's
REST API and writes each cast as received off the wire into
``tests/unit/nova/casts/NAME.json``::

    {"request": <the POST /servers body>,
     "routing_key": "conductor", "exchange": "nova",
     "body": <the AMQP message body: oslo.messaging's envelope>}

The unit tests of the door read these files; they need no nova. Run it
again (and review the diff) when the Nova release cellboot follows
changes::

    .venv/bin/python tools/capture_nova_casts.py [--out DIR]

It needs the services of ``make test`` (MariaDB, RabbitMQ with
``rabbitmqctl``), and cleans up what it made (databases, vhosts).
"""

import argparse
import json
import os
import sys
import time

import fixtures
import kombu

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from tests import fixtures as cb_fixtures  # noqa: E402
from tests.functional.multiprocess import rabbit  # noqa: E402
from tests.functional.nova import novaapi  # noqa: E402
from tests.functional.nova import standins  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), 'tests', 'unit', 'nova', 'casts')
WAIT = 20

# Stands for the uuid of the server group made first (GROUP_BODY).
GROUP = '<group>'
GROUP_BODY = {'server_group': {'name': 'spread',
                               'policy': 'anti-affinity'}}

# What the door must understand, one boot each: (file name, the server
# of the POST body, scheduler hints).
CASES = [
    ('single', {
        'name': 'web-1', 'imageRef': standins.IMAGE_ID,
        'flavorRef': novaapi.FLAVOR, 'networks': 'none',
        'metadata': {'role': 'web', 'tier': 'front'},
    }, None),
    ('multi_create_3', {
        'name': 'batch', 'imageRef': standins.IMAGE_ID,
        'flavorRef': novaapi.FLAVOR, 'networks': 'none',
        'min_count': 3, 'max_count': 3,
    }, None),
    ('password_hints_tags', {
        'name': 'db-1', 'imageRef': standins.IMAGE_ID,
        'flavorRef': novaapi.FLAVOR, 'networks': 'none',
        'adminPass': 'stand-in-secret',
        'tags': ['blue', 'green'],
        'user_data': 'IyEvYmluL3NoCmVjaG8gaGk=',
    }, {'different_host': [], 'custom_hint': 'x'}),
    ('server_group', {
        'name': 'spread', 'imageRef': standins.IMAGE_ID,
        'flavorRef': novaapi.FLAVOR, 'networks': 'none',
        'min_count': 2, 'max_count': 2,
    }, {'group': GROUP}),
]


def _parse(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n', 1)[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split('\n\n', 1)[1])
    parser.add_argument('--out', default=OUT,
                        help='where the JSON files go (default: '
                             '%(default)s)')
    return parser.parse_args(argv)


def _log(message):
    sys.stderr.write(f'{time.strftime("%H:%M:%S")} {message}\n')


class _Capture:
    """A queue bound to Nova's conductor topic, on the API's vhost."""

    def __init__(self, url):
        self.connection = kombu.Connection(url.replace('rabbit://',
                                                       'amqp://'))
        exchange = kombu.Exchange('nova', type='topic', durable=False)
        self.queue = kombu.Queue('conductor', exchange,
                                 routing_key='conductor', durable=False)
        self.queue(self.connection.default_channel).declare()

    def take(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self.queue(self.connection.default_channel).get(
                no_ack=True)
            if message is not None:
                return message
            time.sleep(0.1)
        raise AssertionError(f'no cast reached the conductor topic within '
                             f'{timeout} s')

    def close(self):
        self.connection.release()


def capture(out):
    with fixtures.Fixture() as scope:
        databases = [scope.useFixture(cb_fixtures.Database('mysql')).url
                     for _ in range(3)]
        api_bus = scope.useFixture(rabbit.Vhost()).url
        cell_bus = scope.useFixture(rabbit.Vhost()).url
        stand_ins = standins.StandIns().start()
        scope.addCleanup(stand_ins.stop)
        taker = _Capture(api_bus)
        scope.addCleanup(taker.close)
        _log('setting up nova-api (schemas, cells, flavor)')
        nova = scope.useFixture(novaapi.NovaApi(
            *databases, api_bus, cell_bus, stand_ins.url))
        os.makedirs(out, exist_ok=True)
        group = nova.create_server_group(GROUP_BODY)
        for name, server, hints in CASES:
            hints = hints and {key: group if value == GROUP else value
                               for key, value in hints.items()}
            answer = nova.boot(server, hints)
            if answer.status_code != 202:
                raise AssertionError(f'{name}: nova-api answered '
                                     f'{answer.status_code}: {answer.text}\n'
                                     f'{nova.log()[-3000:]}')
            message = taker.take(WAIT)
            body = message.body
            if isinstance(body, bytes):
                body = body.decode()
            record = {
                'request': {'server': server,
                            **({'os:scheduler_hints': hints}
                               if hints else {})},
                'exchange': message.delivery_info.get('exchange'),
                'routing_key': message.delivery_info.get('routing_key'),
                'body': json.loads(body) if isinstance(body, str) else body,
            }
            path = os.path.join(out, f'{name}.json')
            with open(path, 'w') as dump:
                json.dump(record, dump, indent=1, sort_keys=True)
                dump.write('\n')
            _log(f'{name}: {path}')


def main(argv=None):
    args = _parse(argv)
    novaapi.check_venv()
    capture(args.out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
