"""Pools sized to the service, and the budget docs/reliability.md gives."""

import os
import re

from cellboot.db import facade
from cellboot.db import pools
from cellboot.flowrun import backend as flow_db
from tests import base

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..')
DOC = os.path.join(ROOT, 'docs', 'reliability.md')
README = os.path.join(ROOT, 'README.md')
URL = 'mysql+pymysql://u:p@db.example/api'


def _section():
    with open(DOC, encoding='utf-8') as f:
        text = f.read()
    return text.split('## Database connections', 1)[1].split('\n## ', 1)[0]


class SizingTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.addCleanup(pools.reset)

    def facade_pool(self, **options):
        manager = facade.new_context_manager(URL, max_retries=0, **options)
        self.addCleanup(manager.dispose_pool)
        pool = manager.writer.get_engine().pool
        return pool.size(), pool._max_overflow

    def test_a_process_that_is_no_service_keeps_oslo_db_s_defaults(self):
        self.assertEqual((5, 50), self.facade_pool())

    def test_each_service_kind_sizes_its_pools(self):
        self.flags(wsgi_threads=10, group='api')
        self.flags(max_simultaneous_jobs=12, group='jobboard')
        for kind, size in (('api', 10), ('conductor', 12),
                           ('compute', pools.RPC_POOL_SIZE),
                           ('scheduler', pools.RPC_POOL_SIZE),
                           ('all-in-one', 22)):
            pools.serve_as(kind)
            self.assertEqual((size, pools.OVERFLOW), self.facade_pool(),
                             kind)

    def test_the_options_win(self):
        pools.serve_as('conductor')
        self.assertEqual((3, 0), self.facade_pool(max_pool_size=3,
                                                  max_overflow=0))
        self.assertEqual((3, pools.OVERFLOW),
                         self.facade_pool(max_pool_size=3))

    def test_the_database_options_are_unset_by_default(self):
        from cellboot.conf import CONF
        self.assertIsNone(CONF.database.max_pool_size)
        self.assertIsNone(CONF.api_database.max_overflow)

    def test_the_flow_engine_is_sized_as_the_others(self):
        pools.serve_as('conductor')
        engine = flow_db._create_engine(URL)
        self.addCleanup(engine.dispose)
        self.assertEqual(16, engine.pool.size())
        self.assertEqual(pools.OVERFLOW, engine.pool._max_overflow)
        self.flags(max_pool_size=2, max_overflow=1, group='database')
        engine = flow_db._create_engine(URL)
        self.addCleanup(engine.dispose)
        self.assertEqual((2, 1), (engine.pool.size(),
                                  engine.pool._max_overflow))

    def test_an_unknown_kind_is_refused(self):
        self.assertRaises(ValueError, pools.serve_as, 'nosuch')


class BudgetDocTest(base.TestCase):
    """The formula and the table of docs/reliability.md match the code."""

    def formula(self):
        match = re.search(r'^budget = (.+)$', _section(), re.M)
        return match.group(1).replace('×', '*')

    def test_the_formula_is_the_code_s(self):
        for wsgi_threads, jobs in ((16, 16), (4, 32)):
            self.flags(wsgi_threads=wsgi_threads, group='api')
            self.flags(max_simultaneous_jobs=jobs, group='jobboard')
            for a, n, m, k, s in ((1, 1, 1, 1, 0), (2, 3, 5, 17, 1),
                                  (1, 3, 2, 8, 2)):
                _, total = pools.budget(supers=n, cells=m, computes=k,
                                        apis=a, schedulers=s)
                names = dict(A=a, N=n, M=m, K=k, S=s, W=wsgi_threads,
                             J=jobs)
                self.assertEqual(total, eval(self.formula(), {}, names),
                                 names)

    def test_the_table_is_the_code_s(self):
        rows = re.findall(
            r'^\| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| '
            r'(\d+) \|$', _section(), re.M)
        self.assertGreater(len(rows), 2)
        for a, n, m, k, s, budget, max_connections in (
                tuple(map(int, row)) for row in rows):
            _, total = pools.budget(supers=n, cells=m, computes=k, apis=a,
                                    schedulers=s)
            self.assertEqual(total, budget, (a, n, m, k, s))
            self.assertEqual(total + 20, max_connections)

    def test_the_per_service_figures_are_the_code_s(self):
        per_process, _ = pools.budget(supers=1, cells=2, computes=1)
        # M = 2, W = J = 16 in the table's per-process column.
        self.assertEqual({'api': 7 * 20, 'super-conductor': 5 * 20,
                          'cell-conductor': 2 * 20, 'compute': 12,
                          'scheduler': 3 * 12}, per_process)

    def test_the_readme_s_example_is_the_code_s(self):
        with open(README, encoding='utf-8') as f:
            text = ' '.join(f.read().split())
        match = re.search(r'\((\d+) for an API, (\d+) super conductors, '
                          r'(\d+) cells and (\d+) compute hosts', text)
        budget, supers, cells, computes = map(int, match.groups())
        self.assertEqual(budget, pools.budget(supers=supers, cells=cells,
                                              computes=computes)[1])
