"""The committed sample policy file is what the rules in code generate."""

import difflib
import os

import fixtures
from oslo_config import cfg
from oslo_policy import generator

from tests import base

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
GENERATOR_CONF = os.path.join(
    REPO_ROOT, 'etc', 'cellboot', 'cellboot-policy-generator.conf')
SAMPLE = os.path.join(REPO_ROOT, 'etc', 'cellboot', 'policy.yaml.sample')


def _read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


class SamplePolicyTest(base.TestCase):

    def test_committed_sample_matches_generated_sample(self):
        output = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'policy.yaml.sample')
        generator.generate_sample(
            args=['--config-file', GENERATOR_CONF, '--output-file', output],
            conf=cfg.ConfigOpts())
        generated = _read(output)
        committed = _read(SAMPLE)
        if committed != generated:
            diff = ''.join(difflib.unified_diff(
                committed.splitlines(True), generated.splitlines(True),
                'committed sample', 'generated now'))
            self.fail('etc/cellboot/policy.yaml.sample is stale: run '
                      '`make genconfig` and commit the result.\n' + diff)

    def test_every_rule_of_the_sample_is_commented_out(self):
        # The sample documents the defaults; an uncommented line would
        # be an override that nobody asked for.
        for line in _read(SAMPLE).splitlines():
            self.assertTrue(not line.strip() or line.startswith('#'), line)
