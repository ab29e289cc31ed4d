"""cellboot reads Nova's messages without nova: no module imports it.

nova pins its own releases of the oslo libraries and pulls in hundreds
of packages; the door must work in cellboot's virtualenv, where nova is
not installed (FACTS: it lives in ``.nova-venv``, for the tests that run
a real nova-api).
"""

import ast
import pathlib

from tests import base

ROOT = pathlib.Path(__file__).resolve().parents[3] / 'cellboot'


class NoNovaImportTest(base.TestCase):

    def test_no_module_imports_nova(self):
        found = []
        for path in sorted(ROOT.rglob('*.py')):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module]
                else:
                    continue
                found += [f'{path.relative_to(ROOT)}:{node.lineno} {name}'
                          for name in names
                          if name == 'nova' or name.startswith('nova.')]
        self.assertEqual([], found)
        self.assertTrue((ROOT / 'nova' / 'casts.py').exists())
