"""Prepare the local database servers for cellboot's tests.

oslo.db's opportunistic test fixtures connect as ``openstack_citest``
(password ``openstack_citest``) to a database of the same name on MariaDB /
MySQL and PostgreSQL, and create a throw-away database per test resource.
This script creates that user and database with the servers' administrator
accounts, resets the user's password and rights if they drifted, then logs
in as that user to prove the tests will be able to. On MariaDB it also
raises ``max_connections`` to ``MYSQL_MAX_CONNECTIONS`` (until the server
restarts): the chaos deployment beside another test needs more than the
default 151. It is safe to run any
number of times (``make services`` runs it before every ``make test``).

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
CONNECT_TIMEOUT = 5  # seconds; a stopped server must not hang `make test`
MYSQL_MAX_CONNECTIONS = 500


def _admin(env, default):
    host, port, user, password = os.environ.get(env, default).split(':', 3)
    return host, int(port), user, password


def prepare_mysql():
    import pymysql

    host, port, user, password = _admin(
        'CELLBOOT_MYSQL_ADMIN_URL', '127.0.0.1:3306:root:')
    conn = pymysql.connect(host=host, port=port, user=user,
                           password=password,
                           connect_timeout=CONNECT_TIMEOUT, autocommit=True)
    try:
        with conn.cursor() as cur:
            for h in ('%', 'localhost'):
                cur.execute("CREATE USER IF NOT EXISTS %s@%s "
                            "IDENTIFIED BY %s", (USER, h, PASSWORD))
                # An existing user may have another password.
                cur.execute("ALTER USER %s@%s IDENTIFIED BY %s",
                            (USER, h, PASSWORD))
                # Provisioning creates and drops a database per test.
                cur.execute("GRANT ALL PRIVILEGES ON *.* TO %s@%s "
                            "WITH GRANT OPTION", (USER, h))
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
            cur.execute("FLUSH PRIVILEGES")
            # The chaos deployment (three cells of services in processes)
            # holds about 120 connections while a test beside it holds
            # its own: MariaDB's default of 151 refuses some of them.
            # Raised until the server restarts, never lowered.
            cur.execute("SET GLOBAL max_connections = GREATEST("
                        "@@GLOBAL.max_connections, %s)",
                        (MYSQL_MAX_CONNECTIONS,))
    finally:
        conn.close()

    # Log in the way the tests do.
    conn = pymysql.connect(host=host, port=port, user=USER,
                           password=PASSWORD, database=DATABASE,
                           connect_timeout=CONNECT_TIMEOUT)
    conn.close()


def prepare_postgresql():
    import psycopg2

    host, port, user, password = _admin(
        'CELLBOOT_POSTGRESQL_ADMIN_URL', '127.0.0.1:5432:postgres:')
    conn = psycopg2.connect(host=host, port=port, user=user,
                            password=password or None, dbname='postgres',
                            connect_timeout=CONNECT_TIMEOUT)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (USER,))
            verb = 'ALTER' if cur.fetchone() else 'CREATE'
            # SUPERUSER: provisioning ends other sessions on a database
            # before it drops it.
            cur.execute(f"{verb} ROLE {USER} WITH LOGIN CREATEDB SUPERUSER "
                        "PASSWORD %s", (PASSWORD,))
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                        (DATABASE,))
            if not cur.fetchone():
                cur.execute(f"CREATE DATABASE {DATABASE} OWNER {USER}")
    finally:
        conn.close()

    conn = psycopg2.connect(host=host, port=port, user=USER,
                            password=PASSWORD, dbname=DATABASE,
                            connect_timeout=CONNECT_TIMEOUT)
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
            print(f'prepare_services: {name} not prepared: {exc}'.rstrip(),
                  file=sys.stderr)
        else:
            print(f'prepare_services: {name} ready ({USER})')
    if failed and strict:
        print('prepare_services: CI=true, so the database tests cannot '
              'skip: start the servers (or set CELLBOOT_*_ADMIN_URL) and '
              'run again', file=sys.stderr)
        return 1
    if failed:
        print('prepare_services: the tests that need these servers will '
              'be skipped', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
