"""The API answers as /openapi.json says: schemathesis finds nothing.

schemathesis reads the document the API serves, generates requests from
it (valid ones, invalid ones, undeclared methods, wrong media types,
missing credentials) in all four of its phases (examples, coverage,
fuzzing, and the stateful phase, which follows the document's links:
boot a server with a listed flavor, then read and delete it), sends
them over HTTP to a running API (``APIServer``: the real server in
front of a whole deployment) and runs all of its checks on every
answer: no 5xx, every status and header documented, every body valid
against its schema, valid data accepted, invalid data refused, 405 with
``Allow``. The run must end without a single failure, and the API's
catch-all must never have run.

Configured, and why:

* An ``X-Auth-Token`` on every request: the document declares the token
  (noauth2's ``USER:PROJECT``). One run as an administrator, who reaches
  every operation, one as a user, for whom the administrators'
  operations answer the documented 403; the checks that drop the token
  (``ignored_auth``) still run.
* ``POST /servers`` may answer 400 to a schema-valid body: whether the
  flavor and the server group exist, and ``min_count <= max_count``,
  are rules JSON Schema cannot express (the 400 says which was broken).
  The paged lists may answer 400 to a schema-valid ``marker``: whether
  it names an item of the list is a rule JSON Schema cannot express
  either (an unknown marker is 400 ``Marker ... could not be found``,
  as in Nova). A flavor's extra specs may answer 400 too: whether a
  ``resources:`` or ``trait:`` key names a class or trait that exists,
  with a value it takes, depends on the catalog; so may the catalog's
  paths whose name is a path parameter (a standard or malformed name)
  and the providers list's ``cell`` (a cell that exists); so may an
  allocation request (its classes and traits, whether a provider has
  room) and a quota set naming a resource class (one that exists). Every other
  operation must accept every schema-valid request.
* ``[api] max_count = 3``: a small deployment (the document says so in
  the schema), so that a generated multi-create boots three servers,
  not a thousand.
* A fixed seed and a bounded number of examples, so that a run fits in
  the suite and a failure can be replayed (``CELLBOOT_SCHEMATHESIS_SEED``
  picks another seed, ``CELLBOOT_SCHEMATHESIS_EXAMPLES`` more examples).
"""

import os
import re
import subprocess
import sys
import textwrap

import fixtures

from tests import base
from tests.functional.api import fixtures as api_fixtures

SEED = int(os.environ.get('CELLBOOT_SCHEMATHESIS_SEED', '20261124'))
EXAMPLES = int(os.environ.get('CELLBOOT_SCHEMATHESIS_EXAMPLES', '25'))

# Seconds the whole run may take before it counts as a hang.
RUN_TIMEOUT = 300

# Operations that may answer 400 to schema-valid input, and why (see
# the module docstring): the boot's references, the lists' marker.
SEMANTIC_400 = (('POST', '/servers'), ('GET', '/servers'),
                ('GET', '/servers/detail'), ('GET', '/flavors'),
                ('GET', '/os-server-groups'),
                ('GET', '/os-hypervisors/detail'), ('GET', '/os-cells'),
                ('GET', '/os-flows'), ('POST', '/flavors'),
                ('POST', '/flavors/{flavor_id}/os-extra_specs'),
                ('PUT', '/flavors/{flavor_id}/os-extra_specs/{key}'),
                ('GET', '/os-resource-classes'), ('GET', '/os-traits'),
                ('DELETE', '/os-resource-classes/{name}'),
                ('PUT', '/os-traits/{name}'),
                ('DELETE', '/os-traits/{name}'),
                ('GET', '/os-resource-providers'),
                ('POST', '/os-allocations'), ('GET', '/os-allocations'),
                ('PUT', '/os-quota-sets/{project_id}'))

CONFIG = ''.join(textwrap.dedent(f'''\
    [[operations]]
    include-path = "{path}"
    include-method = "{method}"
    checks.positive_data_acceptance.expected-statuses = [
        "2xx", "400", "401", "403", "404", "409"]
    ''') for method, path in SEMANTIC_400)


def schemathesis_command():
    """The ``schemathesis`` console script of this interpreter's venv."""
    return [os.path.join(os.path.dirname(sys.executable), 'schemathesis')]


class SchemathesisTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(max_count=3, group='api')
        self.api = self.useFixture(api_fixtures.APIServer(cells=1,
                                                          hosts_per_cell=2))
        self.workdir = self.useFixture(fixtures.TempDir()).path

    def run_schemathesis(self, token):
        config = os.path.join(self.workdir, 'schemathesis.toml')
        with open(config, 'w') as handle:
            handle.write(CONFIG)
        command = schemathesis_command() + [
            '--config-file', config, '--no-color', 'run',
            self.api.url + '/openapi.json',
            '--checks', 'all',
            '--header', f'X-Auth-Token: {token}',
            '--max-examples', str(EXAMPLES), '--seed', str(SEED),
            '--generation-database', 'none', '--workers', '1',
            '--request-timeout', '30']
        return subprocess.run(command, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT, cwd=self.workdir)

    def assertNoFailure(self, token):
        result = self.run_schemathesis(token)
        report = result.stdout[-30000:] + result.stderr[-5000:]
        self.assertEqual(0, result.returncode, report)
        # Warnings (e.g. a user's 403 on the administrators' operations)
        # are not failures; every generated case must have passed.
        self.assertNotIn('Failures:', result.stdout, report)
        counts = re.search(r'(\d+) generated, (\d+) passed', result.stdout)
        self.assertIsNotNone(counts, report)
        self.assertEqual(counts.group(1), counts.group(2), report)
        summary = result.stdout.split('Test Phases:')[1]
        for phase in ('Examples', 'Coverage', 'Fuzzing', 'Stateful'):
            self.assertIn(f'✅ {phase}', summary, report)
        self.assertEqual(0, self.api.app.unexpected)

    def test_schemathesis_finds_no_failure_for_an_administrator(self):
        self.assertNoFailure(api_fixtures.ADMIN_TOKEN)

    def test_schemathesis_finds_no_failure_for_a_user(self):
        self.assertNoFailure(api_fixtures.ALICE_TOKEN)
