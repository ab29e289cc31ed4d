"""Boots through a real nova-api and the Nova door, against cellboot's API.

One deployment (``tests.functional.cluster``: a super conductor, its
scheduler, ``--cells`` cells of ``--hosts`` fake compute hosts each, all
in this process, on SQLite and the in-process bus) serves two ways in:

* **nova**: an unmodified nova-api 34 (``.nova-venv``, ``make
  nova-venv``) on MariaDB, casting over RabbitMQ to the super
  conductor's Nova door (``[nova] enabled``);
* **cellboot**: cellboot's own REST API on the same deployment.

Each way boots ``--count`` single servers from ``--clients`` threads,
``POST /servers`` as fast as the API answers, and the phase ends when
every one of them is settled (ACTIVE or ERROR) where its API shows it:
in cellboot's cell databases for cellboot's API; for nova-api, in
nova-api's own cell databases, written by the Nova mirror (``[nova]
api_database_connection``, a pass every ``--mirror-interval`` s; every
cellboot cell is mirrored by nova-api's one cell). Printed: one JSON
line with each way's boots/s, the mean ``POST`` latency and the ratio;
progress goes to stderr. nova-api's
figures include its own work (its database writes, its calls to the
Glance and Neutron stand-ins), which is what a Nova deployment pays.

    .venv/bin/python benchmarks/nova_door.py --count 100 --clients 4

Needs MariaDB and RabbitMQ (with ``rabbitmqctl``), as ``make test``.
"""

import argparse
import concurrent.futures
import json
import os
import sys
import time

import fixtures
import requests
import sqlalchemy as sa

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from cellboot.cli import arguments  # noqa: E402
from cellboot.conductor import nova_door  # noqa: E402
from cellboot.conductor import nova_mirror  # noqa: E402
from cellboot.conf import CONF  # noqa: E402
from cellboot import context as cb_context  # noqa: E402
from cellboot.db.cell import connection as cell_db  # noqa: E402
from cellboot.nova import tables  # noqa: E402
from cellboot.nova import casts  # noqa: E402
from cellboot.objects import instance as instance_obj  # noqa: E402
from cellboot import rpc  # noqa: E402
from cellboot import service  # noqa: E402
from tests import fixtures as cb_fixtures  # noqa: E402
from tests.functional import cluster as cluster_fixture  # noqa: E402
from tests.functional.multiprocess import rabbit  # noqa: E402
from tests.functional.nova import novaapi  # noqa: E402
from tests.functional.nova import standins  # noqa: E402

CELLBOOT_PROJECT = 'bench-cellboot'
SETTLE_TIMEOUT = 600


def _log(message):
    sys.stderr.write(f'{time.strftime("%H:%M:%S")} {message}\n')


def _parse(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n', 1)[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split('\n\n', 1)[1])
    parser.add_argument('--count', type=arguments.positive_int,
                        default=100,
                        help='single boots per way in (default: '
                             '%(default)s)')
    parser.add_argument('--clients', type=arguments.positive_int,
                        default=4,
                        help='client threads per way in (default: '
                             '%(default)s)')
    parser.add_argument('--warmup', type=arguments.non_negative_int,
                        default=5,
                        help='boots per way in before it is measured '
                             '(first-use costs; default: %(default)s)')
    parser.add_argument('--mirror-interval',
                        type=arguments.seconds_at_least(0.1), default=1.0,
                        help='[nova] mirror_interval, s (default: '
                             '%(default)s)')
    parser.add_argument('--cells', type=arguments.positive_int, default=2)
    parser.add_argument('--hosts', type=arguments.positive_int, default=4,
                        help='compute hosts per cell (default: '
                             '%(default)s)')
    return parser.parse_args(argv)


def _nova_settled(engines, uuids):
    """How many of ``uuids`` nova-api shows settled (ACTIVE or ERROR)."""
    done = 0
    for engine in engines:
        with engine.connect() as conn:
            done += conn.execute(sa.select(sa.func.count()).where(
                tables.INSTANCES.c.uuid.in_(list(uuids)),
                tables.INSTANCES.c.vm_state.in_(('active', 'error')))
            ).scalar()
    return done


def _settled(cluster, uuids):
    """How many of ``uuids`` cellboot has settled (ACTIVE or ERROR)."""
    done = 0
    for cell in [cluster.cell0] + cluster.cells:
        with cb_context.target_cell(cluster.ctx, cell) as cctxt:
            done += sum(
                1 for instance in instance_obj.Instance.get_by_uuids(
                    cctxt, list(uuids))
                if instance.vm_state in ('active', 'error'))
    return done


def _phase(name, settled, post, count, clients):
    """Boot ``count`` servers with ``post()`` (returns a uuid) until
    ``settled(uuids)`` counts them all."""
    _log(f'{name}: {count} single boots from {clients} clients')
    latencies = []

    def one(_index):
        started = time.perf_counter()
        uuid = post()
        latencies.append(time.perf_counter() - started)
        return uuid

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        uuids = set(pool.map(one, range(count)))
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while settled(uuids) < len(uuids):
        if time.monotonic() > deadline:
            raise SystemExit(f'{name}: not settled in {SETTLE_TIMEOUT} s')
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    figures = {'boots': count, 'seconds': round(seconds, 2),
               'boots_per_s': round(count / seconds, 1),
               'post_ms_mean': round(1000 * sum(latencies) / count, 1)}
    _log(f'{name}: {json.dumps(figures)}')
    return figures


def _nova_post(nova):
    def post():
        answer = nova.boot({'name': 'bench', 'imageRef': standins.IMAGE_ID,
                            'flavorRef': novaapi.FLAVOR,
                            'networks': 'none'})
        answer.raise_for_status()
        return answer.json()['server']['id']
    return post


def _cellboot_post(url):
    session = requests.Session()
    session.headers['X-Auth-Token'] = f'bench:{CELLBOOT_PROJECT}'

    def post():
        answer = session.post(f'{url}/servers', json={'server': {
            'name': 'bench', 'flavorRef': cluster_fixture.FLAVOR['flavorid'],
            'imageRef': 'cirros'}}, timeout=60)
        answer.raise_for_status()
        return answer.json()['server']['id']
    return post


def run(args):
    CONF([], project='cellboot', default_config_files=[])
    CONF.set_override('instances', -1, group='quota')
    CONF.set_override('cores', -1, group='quota')
    CONF.set_override('ram', -1, group='quota')
    with fixtures.Fixture() as scope:
        nova_bus = scope.useFixture(rabbit.Vhost()).url
        nova_cell_bus = scope.useFixture(rabbit.Vhost()).url
        databases = [scope.useFixture(cb_fixtures.Database('mysql')).url
                     for _ in range(3)]
        _log('starting the deployment')
        cluster = scope.useFixture(cluster_fixture.Cluster(
            cells=args.cells, hosts_per_cell=args.hosts, vcpus=1024,
            memory_mb=1024 * 1024, local_gb=100000, port=0))
        CONF.set_override('transport_url', nova_bus, group='nova')
        door = service.RPCService(
            'door-host', casts.TOPIC,
            [nova_door.NovaDoor(cluster.super_conductor)],
            rpc.get_nova_transport(), exchange=CONF.nova.exchange)
        door.start()
        scope.addCleanup(door.wait)
        scope.addCleanup(door.stop)
        stand_ins = standins.StandIns().start()
        scope.addCleanup(stand_ins.stop)
        _log('setting up nova-api')
        nova = scope.useFixture(novaapi.NovaApi(
            *databases, nova_bus, nova_cell_bus, stand_ins.url))
        CONF.set_override('mirror_interval', args.mirror_interval,
                          group='nova')
        CONF.set_override('cells', {cell.name: 'cell1'
                                    for cell in cluster.cells}, group='nova')
        mirror = nova_mirror.MirrorService(cluster.super_conductor,
                                           databases[0])
        mirror.start()
        scope.addCleanup(mirror.stop)
        nova_cells = [cell_db.get_engine(url) for url in databases[1:]]
        ways = {
            'nova': (_nova_post(nova),
                     lambda uuids: _nova_settled(nova_cells, uuids)),
            'cellboot': (_cellboot_post(cluster.deployment.url),
                         lambda uuids: _settled(cluster, uuids))}
        figures = {}
        for name, (post, settled) in ways.items():
            if args.warmup:
                _phase(f'{name} warm-up', settled, post, args.warmup, 1)
            figures[name] = _phase(name, settled, post, args.count,
                                   args.clients)
    figures['nova_to_cellboot'] = round(
        figures['nova']['boots_per_s'] / figures['cellboot']['boots_per_s'],
        2)
    return {'benchmark': 'nova_door', 'count': args.count,
            'clients': args.clients, 'warmup': args.warmup,
            'mirror_interval': args.mirror_interval,
            'cells': args.cells,
            'hosts_per_cell': args.hosts, **figures}


def main(argv=None):
    args = _parse(argv)
    novaapi.check_venv()
    print(json.dumps(run(args)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
