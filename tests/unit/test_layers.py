"""The package's layers, and who may import TaskFlow: checked, not hoped.

docs/architecture.md ("How the code is laid out") describes cellboot as
layers, each importing only from the layers below it, so that a change
low down never has to know what sits above it, and a new feature lands
in one obvious place. This test reads every module's imports (with
``ast``, nothing is imported) and fails on an arrow that runs back up,
on a package no layer names (a new package must be given its place),
and on TaskFlow's internals used outside ``cellboot.flowrun``.

Within a package imports are free; between two packages of one layer
they are refused too, so that the table stays the whole truth.
"""

import ast
import pathlib

from tests import base

ROOT = pathlib.Path(__file__).resolve().parents[2] / 'cellboot'

# Bottom to top. A name is a package or a top-level module of cellboot.
LAYERS = (
    ('conf', 'exception', 'masking', 'policies'),
    ('db', 'policy', 'console', 'notifications', 'metrics'),
    ('objects', 'context'),
    ('builds', 'rpc', 'quota', 'nova'),
    ('scheduler', 'workflows', 'cells', 'service', 'service_runner'),
    ('flowrun', 'compute'),
    ('conductor',),
    ('api', 'cli'),
    ('allinone', 'wsgi'),
    ('cmd',),
)
LAYER_OF = {name: index for index, names in enumerate(LAYERS)
            for name in names}

# What flows and tasks may use of TaskFlow; everything else of it is
# cellboot.flowrun's (the contract test there lists the private hooks).
PUBLIC_TASKFLOW = frozenset({
    'taskflow', 'taskflow.task', 'taskflow.retry', 'taskflow.patterns',
    'taskflow.patterns.linear_flow', 'taskflow.patterns.graph_flow',
    'taskflow.patterns.unordered_flow', 'taskflow.states',
    'taskflow.exceptions', 'taskflow.types', 'taskflow.types.failure',
})


def _modules():
    for path in sorted(ROOT.rglob('*.py')):
        relative = path.relative_to(ROOT)
        if 'migrations' in relative.parts or relative == pathlib.Path(
                '__init__.py'):
            continue
        yield relative, ast.parse(path.read_text(), str(path))


def _imported(tree):
    """Every module name an import statement of ``tree`` names."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f'{node.module}.{alias.name}'


def _part(relative):
    first = relative.parts[0]
    return first[:-3] if first.endswith('.py') else first


class LayersTest(base.TestCase):

    def test_every_package_has_a_layer(self):
        parts = {_part(relative) for relative, _tree in _modules()}
        self.assertEqual(set(), parts - set(LAYER_OF),
                         'give these a layer in LAYERS (and in '
                         'docs/architecture.md)')

    def test_no_import_runs_back_up(self):
        wrong = []
        for relative, tree in _modules():
            part = _part(relative)
            for lineno, name in _imported(tree):
                names = name.split('.')
                if names[0] != 'cellboot' or len(names) < 2:
                    continue
                target = names[1]
                if target == part or target not in LAYER_OF:
                    continue
                if LAYER_OF[target] >= LAYER_OF[part]:
                    wrong.append(f'cellboot/{relative}:{lineno} ({part}) '
                                 f'imports {name} ({target})')
        self.assertEqual([], sorted(set(wrong)))

    def test_only_flowrun_uses_taskflow_beyond_its_public_atoms(self):
        wrong = []
        for relative, tree in _modules():
            if relative.parts[0] == 'flowrun':
                continue
            for lineno, name in _imported(tree):
                if name.split('.')[0] != 'taskflow':
                    continue
                if name not in PUBLIC_TASKFLOW and not any(
                        name.startswith(f'{public}.')
                        for public in ('taskflow.patterns',)):
                    wrong.append(f'cellboot/{relative}:{lineno} imports '
                                 f'{name}')
        self.assertEqual([], sorted(set(wrong)))
