"""``db purge`` in its own process while a deployment boots servers.

An in-process deployment (``cluster.Cluster``: SQLite files, the real
conductors, scheduler and compute hosts) has booted servers and deleted
some; then, while a multi-create builds (slow spawns keep it under way),
``cellboot-manage db purge`` runs again and again against the same
databases. The deleted servers and their ended flows go; the boot under
way, its flow and its servers are untouched and end ACTIVE, and the
deployment's invariants hold.
"""

import os
import textwrap
import time

from oslo_utils import timeutils

from cellboot.api import server_records
from cellboot import exception
from cellboot.objects import instance_mapping
from tests import base
from tests.functional import cluster as cluster_mod
from tests.functional.cmd import base as cmd_base
from tests.functional import invariants

# Seconds each fake spawn takes: long enough for purges to overlap it.
SPAWN_SECONDS = 2.5


class PurgeWhileBootingTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.cluster = self.useFixture(cluster_mod.Cluster(
            cells=2, hosts_per_cell=2))
        self.ctx = self.cluster.ctx
        self.config_file = os.path.join(self.cluster.state_path,
                                        'manage.conf')
        with open(self.config_file, 'w') as conf:
            conf.write(textwrap.dedent(f"""\
                [DEFAULT]
                state_path = {self.cluster.state_path}

                [api_database]
                connection = {self.cluster.api_url}

                [flow_persistence]
                connection = {self.cluster.flow_url}
                """))

    def purge(self, before):
        return cmd_base.run('--config-file', self.config_file, 'db', 'purge',
                            '--before', before.isoformat(), '--batch-size',
                            '2')

    def test_a_purge_during_a_boot_leaves_the_boot_alone(self):
        old = self.cluster.boot(count=4)
        self.cluster.wait_for_quiet()
        deleted = old[:2]
        for uuid in deleted:
            server_records.delete(self.ctx, uuid, self.cluster.scheduler)
        # Everything of the first boot ended strictly before this.
        time.sleep(0.1)
        before = timeutils.utcnow()
        self.flags(spawn_time=SPAWN_SECONDS, group='fake_driver')
        booting = self.cluster.boot(count=6)
        runs = []
        while not self.cluster._is_quiet():
            result = self.purge(before)
            self.assertEqual(0, result.code, result)
            runs.append(result)
        self.cluster.wait_for_quiet()
        self.assertTrue(runs, 'the boot ended before any purge ran')
        self.assertIn('Done: ', runs[0].stdout)
        for uuid in booting + old[2:]:
            self.assertEqual('active', self.cluster.find(uuid)[1].vm_state)
        # The boot under way kept its flow; the first boot's ended before.
        self.assertEqual(['SUCCESS'], [flow['state'] for flow in
                                       self.cluster.flows(booting[0])])
        self.assertEqual([], self.cluster.flows(old[2]))
        for uuid in deleted:
            self.assertRaises(exception.InstanceNotFound, self.cluster.find,
                              uuid)
            self.assertEqual([], self.cluster.flows(uuid))
        self.assertEqual(
            sorted(booting + old[2:]),
            sorted(m.instance_uuid for m in
                   instance_mapping.InstanceMapping.get_by_project(
                       self.ctx, self.ctx.project_id)))
        self.assertEqual([], invariants.check_invariants(self.ctx))
