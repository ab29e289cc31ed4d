"""What a transaction costs beyond its statements: pings and resets.

Runs ``--count`` pairs of transactions through cellboot's database
facade (``cellboot.db.facade``, the engines every service uses), one
after the other from one thread: a writer that inserts a row, then a
reader that reads one. Reported, the best of ``--repeat`` rounds: CPU
and wall microseconds per pair in this process, and on MariaDB/MySQL
the round trips the server counted per pair (``Questions``, of which
``Com_rollback``, and ``Com_admin_commands``: the pings), server-wide
(run it on a quiet server). The last line printed is one JSON object.

The database at ``--url`` must exist; the benchmark creates its table
``pool_round_trips`` there and drops it at the end. To compare with an
earlier commit, put its tree first on the path:

  .venv/bin/python benchmarks/pool_round_trips.py \\
      --url mysql+pymysql://root@127.0.0.1/bench
  PYTHONPATH=TREE .venv/bin/python benchmarks/pool_round_trips.py ...
"""

import argparse
import json
import time

import sqlalchemy as sa

from cellboot.cli import arguments
from cellboot.db import facade

TABLE = 'pool_round_trips'
COUNTERS = ('Questions', 'Com_rollback', 'Com_admin_commands')


class _Context:
    """What enginefacade needs of a request context: a place for its
    session."""


def _counters(engine):
    """MariaDB/MySQL's round-trip counters, or None on other servers."""
    if engine.dialect.name != 'mysql':
        return None
    with engine.connect() as conn:
        rows = conn.execute(sa.text(
            'SHOW GLOBAL STATUS WHERE Variable_name IN '
            "('Questions', 'Com_rollback', 'Com_admin_commands')")).all()
    return {name: int(value) for name, value in rows}


def pairs(manager, count):
    """``(cpu_us, wall_us)`` per write+read pair, over ``count`` pairs."""
    insert = sa.text(f'INSERT INTO {TABLE} (n) VALUES (1)')
    select = sa.text(f'SELECT n FROM {TABLE} LIMIT 1')
    cpu, wall = time.process_time(), time.monotonic()
    for _ in range(count):
        with manager.writer.using(_Context()) as session:
            session.execute(insert)
        with manager.reader.using(_Context()) as session:
            session.execute(select).all()
    return ((time.process_time() - cpu) * 1e6 / count,
            (time.monotonic() - wall) * 1e6 / count)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', required=True,
                        help='SQLAlchemy URL of an existing database')
    parser.add_argument('--count', type=arguments.positive_int, default=2000,
                        help='write+read pairs per round (default 2000)')
    parser.add_argument('--repeat', type=arguments.positive_int, default=3,
                        help='rounds; the best is reported (default 3)')
    args = parser.parse_args()
    try:
        manager = facade.new_context_manager(args.url, max_retries=0)
        engine = manager.writer.get_engine()
        with engine.begin() as conn:
            conn.execute(sa.text(f'DROP TABLE IF EXISTS {TABLE}'))
            conn.execute(sa.text(f'CREATE TABLE {TABLE} (n INTEGER)'))
    except Exception as exc:
        parser.exit(2, f'cannot use the database at --url: '
                       f'{str(exc).splitlines()[0]}\n')
    try:
        pairs(manager, min(100, args.count))     # the pool fills
        rounds = []
        for _ in range(args.repeat):
            before = _counters(engine)
            cpu_us, wall_us = pairs(manager, args.count)
            after = _counters(engine)
            sent = None if before is None else {
                name: round((after[name] - before[name]) / args.count, 2)
                for name in COUNTERS}
            rounds.append({'cpu_us_per_pair': round(cpu_us),
                           'wall_us_per_pair': round(wall_us),
                           'server_per_pair': sent})
            print(f'{cpu_us:.0f} CPU us, {wall_us:.0f} us per pair; '
                  f'server: {sent}')
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f'DROP TABLE IF EXISTS {TABLE}'))
        manager.dispose_pool()
    best = min(rounds, key=lambda r: r['cpu_us_per_pair'])
    print(json.dumps({'backend': engine.dialect.name, 'count': args.count,
                      'repeat': args.repeat, 'best': best,
                      'rounds': rounds}))


if __name__ == '__main__':
    main()
