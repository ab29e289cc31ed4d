"""What the orphan sweep reads of the API database, and what it starts.

``OrphanBuildRequests`` over SQLite, with a manager that records what
it is asked to start. Under load the API database holds hundreds of
young build requests: the sweep must not fetch and decode them all at
every run (it did: ~4.6% of the super conductor's CPU), yet must start
a request only when all of it is old, as before.
"""

import datetime
from unittest import mock

import fixtures
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa
from taskflow.persistence.backends.sqlalchemy import tables as tf_tables
from taskflow import states as tf_states

from cellboot.conductor import orphans
from cellboot.conf import CONF
from cellboot import context as cb_context
from cellboot.db.api import connection as api_connection
from cellboot.flowrun import backend as flow_db
from cellboot.flowrun import kinds
from cellboot.flowrun import records
from cellboot.flowrun import schema as flow_schema
from cellboot.objects import build_request as build_request_obj
from cellboot.objects import request_spec as request_spec_obj
from tests import base
from tests import fixtures as cb_fixtures

BuildRequest = build_request_obj.BuildRequest
_REQUESTS = build_request_obj._REQUESTS
_FLOWS = tf_tables.fetch(sa.MetaData()).flowdetails


class _Manager:
    """The super conductor as the sweep uses it; records what it starts."""

    KIND = kinds.KIND_BOOT
    LEVEL = kinds.SUPER

    def __init__(self, flow_url):
        self.flow_url = flow_url
        self.runner = mock.Mock(board=None)
        self.scheduler = mock.Mock()
        self.started = []

    def persistence(self):
        return self.flow_url

    def schedule_and_build_instances(self, context, build_requests,
                                     request_specs):
        self.started.append([br['instance_uuid'] for br in build_requests])


class OrphanSweepTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(cb_fixtures.DatabasesFixture('sqlite', cells=0))
        flow_url = self.useFixture(cb_fixtures.Database('sqlite')).url
        flow_schema.sync_tables(flow_url)
        self.flags(connection=flow_url, group='flow_persistence')
        self.ctx = cb_context.get_admin_context()
        self.manager = _Manager(flow_url)
        self.check = orphans.OrphanBuildRequests(self.manager)
        # The instance uuids of the build requests decoded (by a sweep:
        # see ``sweep``).
        self.decoded = []
        from_row = BuildRequest._from_row

        def counted(row):
            self.decoded.append(row.instance_uuid)
            return from_row(row)
        self.useFixture(fixtures.MockPatchObject(BuildRequest, '_from_row',
                                                 counted))

    def request(self, count=1, seconds_ago=0, reservation_id=None):
        """Persist a request as the API does, aged; its instance uuids."""
        reservation_id = reservation_id or 'r-' + uuidutils.generate_uuid()
        uuids = [uuidutils.generate_uuid() for _ in range(count)]
        for uuid in uuids:
            BuildRequest.create(self.ctx, uuid, 'p1',
                                {'uuid': uuid,
                                 'reservation_id': reservation_id},
                                user_id='u1')
            request_spec_obj.RequestSpec.create(
                self.ctx, uuid, {'num_instances': count})
        self.age(uuids, seconds_ago)
        return uuids

    @staticmethod
    def age(uuids, seconds_ago):
        """Make the build requests of ``uuids`` ``seconds_ago`` old."""
        with api_connection.get_engine().begin() as conn:
            conn.execute(sa.update(_REQUESTS).where(
                _REQUESTS.c.instance_uuid.in_(uuids)).values(
                created_at=timeutils.utcnow() - datetime.timedelta(
                    seconds=seconds_ago)))

    def flow(self, uuids, state=None):
        """Save the boot flow of the request of ``uuids``, in ``state``."""
        build_requests = [BuildRequest.get_by_instance_uuid(
            self.ctx, uuid).as_cast() for uuid in uuids]
        flow_uuid = records.flow_uuid(
            kinds.KIND_BOOT, records.boot_flow_key(build_requests))
        records.create(kinds.KIND_BOOT, {'instance_uuids': uuids},
                       self.manager.flow_url, uuid_=flow_uuid,
                       meta=records.flow_meta(kinds.KIND_BOOT, uuids,
                                              self.ctx))
        if state is not None:
            with flow_db.get_backend(
                    self.manager.flow_url).engine.begin() as conn:
                conn.execute(sa.update(_FLOWS).where(
                    _FLOWS.c.uuid == flow_uuid).values(state=state))

    def sweep(self):
        """One sweep; ``self.decoded`` is then what it decoded."""
        del self.decoded[:]
        return self.check.sweep_once(self.ctx)

    def test_young_build_requests_are_not_read_when_nothing_is_to_do(self):
        running = self.request(count=2, seconds_ago=60)
        self.flow(running)
        self.request(count=3)
        self.request()
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.sweep())
        self.assertEqual(sorted(running), sorted(self.decoded))
        self.assertEqual([], self.manager.started)

    def test_an_orphan_is_started_among_young_requests(self):
        young = self.request(count=3) + self.request()
        orphan = self.request(count=2, seconds_ago=60)
        self.assertEqual({'started': 1, 'settled': 0, 'handed_over': 0},
                         self.sweep())
        self.assertEqual([orphan], self.manager.started)
        # The young ones were read once, to see that none belongs to the
        # orphan's request; the old ones once.
        self.assertEqual(sorted(orphan + young), sorted(self.decoded))

    def test_nothing_at_all_is_read_when_every_request_is_young(self):
        self.request(count=3)
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.sweep())
        self.assertEqual([], self.decoded)

    def test_a_request_old_only_in_part_waits_until_all_of_it_is(self):
        # A multi-create written across the timeout: its first build
        # request is old, its second not yet.
        first, second = self.request(count=2)
        unstarted = CONF.conductor.unstarted_build_request_timeout
        self.age([first], unstarted + 1)
        self.age([second], unstarted - 1)
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.sweep())
        self.age([second], unstarted + 1)
        self.assertEqual({'started': 1, 'settled': 0, 'handed_over': 0},
                         self.sweep())
        self.assertEqual([[first, second]], self.manager.started)

    def test_a_request_whose_flow_ended_just_now_reads_no_young_one(self):
        # Older than the shorter timeout, not than the orphan timeout:
        # its flow may have ended only just now, it is left as it is.
        ended = self.request(
            seconds_ago=CONF.conductor.unstarted_build_request_timeout + 1)
        self.flow(ended, state=tf_states.FAILURE)
        self.request(count=2)
        self.assertEqual({'started': 0, 'settled': 0, 'handed_over': 0},
                         self.sweep())
        self.assertEqual(ended, self.decoded)
