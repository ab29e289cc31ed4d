"""Metadata as large as the API accepts is stored everywhere it goes.

Over HTTP, on SQLite, MariaDB and PostgreSQL (see ``test_hostile_input``
for the client and the refusal check).
"""

import json

import sqlalchemy as sa

from cellboot.db.cell import connection as cell_connection
from cellboot.db.cell import models as cell_models
from tests.functional.api.test_hostile_input import _HostileTest
from tests.functional.api.test_hostile_input import ASTRAL
from tests.functional.api.test_hostile_input import count_rows
from tests.functional.api.test_hostile_input import MAX_METADATA


class _LargeMetadataTests:
    """Metadata as large as the API accepts is stored, everywhere.

    Per instance it goes, escaped, into ``build_requests.instance``
    (API database), ``instances.metadata`` (the cell, or cell0), the
    RPC messages, and with every sibling of a multi-create into one row
    of the boot flow's store; a request too large for that is refused
    up front (413), never accepted and then stuck.
    """

    # Hosts that never run out: the boots must settle ACTIVE.
    CLUSTER = {'vcpus': 10000, 'memory_mb': 10 ** 8, 'local_gb': 10 ** 7}

    def setUp(self):
        super().setUp()
        # As many servers as the payload limit allows: no quota in the way.
        self.flags(instances=-1, cores=-1, ram=-1, group='quota')

    def boot(self, metadata, count=1, ascii=True):
        server = {'name': 'vm', 'flavorRef': 'small', 'metadata': metadata,
                  'min_count': count, 'max_count': count}
        return self.post(self.alice, '/servers', {'server': server},
                         ascii=ascii)

    @staticmethod
    def most(refused):
        """The count a 413 says would have been accepted."""
        message = refused.json()['overLimit']['message']
        return int(message.split('ask for at most ')[1].split()[0])

    def assertActive(self, response, metadata):
        self.assertEqual(202, response.status_code, response.text)
        self.api.cluster.wait_for_quiet()
        body = response.json()
        uuids = [server['id'] for server in
                 body.get('servers', [body['server']])]
        for uuid in uuids:
            server = self.alice.get(f'/servers/{uuid}').json()['server']
            self.assertEqual('ACTIVE', server['status'], server)
            self.assertEqual(metadata, server['metadata'])
        return uuids

    def test_the_largest_metadata_boots(self):
        uuids = self.assertActive(self.boot(MAX_METADATA), MAX_METADATA)
        cell, _instance = self.api.cluster.find(uuids[0])
        engine = cell_connection.get_engine(cell.database_connection)
        instances = cell_models.Instance.__table__
        with engine.connect() as conn:
            stored = conn.execute(sa.select(instances.c.metadata).where(
                instances.c.uuid == uuids[0])).scalar()
        self.assertGreater(len(stored), 64 * 1024)

    def test_metadata_that_grows_twelvefold_when_escaped_boots(self):
        # As many 4-byte characters as the body limit lets through, sent
        # as UTF-8: over 300 KB once escaped as stored.
        metadata = {f'{index:03d}' + ASTRAL * 100: ASTRAL * 200
                    for index in range(90)}
        response = self.boot(metadata, ascii=False)
        self.assertLess(len(response.request.body), 114688)
        self.assertGreater(len(json.dumps(metadata)), 300000)
        self.assertActive(response, metadata)

    def test_a_multi_create_as_large_as_allowed_boots(self):
        refused = self.boot(MAX_METADATA, count=1000)
        self.assertEqual(413, refused.status_code, refused.text)
        most = self.most(refused)
        self.assertGreater(most, 10)
        self.assertEqual(most, len(self.assertActive(
            self.boot(MAX_METADATA, count=most), MAX_METADATA)))

    def test_one_more_than_allowed_is_refused_whole(self):
        before = count_rows()
        refused = self.boot(MAX_METADATA, count=1000)
        self.assertRefused(413, refused, before,
                           message='max_boot_payload_size')
        self.assertRefused(413, self.boot(
            MAX_METADATA, count=self.most(refused) + 1), before)


class SQLiteLargeMetadataTest(_LargeMetadataTests, _HostileTest):
    pass


class MySQLLargeMetadataTest(_LargeMetadataTests, _HostileTest):
    BACKEND = 'mysql'


class PostgreSQLLargeMetadataTest(_LargeMetadataTests, _HostileTest):
    BACKEND = 'postgresql'
