"""Prepare the local database servers for cellboot's tests.

oslo.db's opportunistic test fixtures connect as ``openstack_citest``
(password ``openstack_citest``) to a database of the same name on MariaDB /
MySQL and PostgreSQL, and create a throw-away database per test resource.
This script creates that user and database with the servers' administrator
accounts, and is safe to run any number of times.

Administrator URLs default to this project's CI machines (MariaDB ``root``
without password, PostgreSQL ``postgres`` with trust auth on 127.0.0.1) and
can be overridden with ``CELLBOOT_MYSQL_ADMIN_URL`` /
``CELLBOOT_POSTGRESQL_ADMIN_URL`` (``host:port:user:password``).

A server that cannot be reached is reported; with ``CI=true`` that is an
error (exit 1), elsewhere a warning (the tests that need it will skip).
"""

import os
import sys

USER = PASSWORD = DATABASE = 'openstack_citest'


def _admin(env, default):
    host, port, user, password = os.environ.get(env, default).split(':', 3)
    return host, int(port), user, password


def prepare_mysql():
    import pymysql

    host, port, user, password = _admin(
        'CELLBOOT_MYSQL_ADMIN_URL', '127.0.0.1:3306:root:')
    conn = pymysql.connect(host=host, port=port, user=user,
                           password=password, connect_timeout=5,
                           autocommit=True)
    with conn.cursor() as cur:
        for h in ('%', 'localhost'):
            cur.execute("CREATE USER IF NOT EXISTS %s@%s IDENTIFIED BY %s",
                        (USER, h, PASSWORD))
            cur.execute("GRANT ALL PRIVILEGES ON *.* TO %s@%s "
                        "WITH GRANT OPTION", (USER, h))
        cur.execute("CREATE DATABASE IF NOT EXISTS openstack_citest")
        cur.execute("FLUSH PRIVILEGES")
    conn.close()


def prepare_postgresql():
    import psycopg2

    host, port, user, password = _admin(
        'CELLBOOT_POSTGRESQL_ADMIN_URL', '127.0.0.1:5432:postgres:')
    conn = psycopg2.connect(host=host, port=port, user=user,
                            password=password or None, dbname='postgres',
                            connect_timeout=5)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (USER,))
        if not cur.fetchone():
            cur.execute("CREATE ROLE openstack_citest WITH LOGIN CREATEDB "
                        "SUPERUSER PASSWORD 'openstack_citest'")
        cur.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                    (DATABASE,))
        if not cur.fetchone():
            cur.execute("CREATE DATABASE openstack_citest "
                        "OWNER openstack_citest")
    conn.close()


def main():
    strict = os.environ.get('CI', '').lower() == 'true'
    failed = False
    for name, fn in (('MariaDB/MySQL', prepare_mysql),
                     ('PostgreSQL', prepare_postgresql)):
        try:
            fn()
        except Exception as exc:  # report every server, then decide
            failed = True
            print(f'prepare_services: {name} not prepared: {exc}',
                  file=sys.stderr)
        else:
            print(f'prepare_services: {name} ready (openstack_citest)')
    if failed and strict:
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
