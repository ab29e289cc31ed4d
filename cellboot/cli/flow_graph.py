"""A flow's atoms and their states as a graph, written for Graphviz.

The graph is a networkx DiGraph: the flow is the first node, each atom a
node in the order the flow runs them, coloured by its state, so an
operator sees at a glance where a build stopped. It is written as DOT
through networkx's pydot support; when the FILE asks for SVG or PNG the
Graphviz ``dot`` program renders it, if installed.
"""

import os
import shutil
import subprocess
import tempfile

import networkx as nx

from cellboot.cli import client as cli_client

# Fill colour per TaskFlow state; anything else stays white.
STATE_COLOURS = {
    'SUCCESS': 'palegreen',
    'FAILURE': 'salmon',
    'REVERTED': 'orange',
    'REVERT_FAILURE': 'red',
    'RUNNING': 'khaki',
    'REVERTING': 'gold',
    'RETRYING': 'lightblue',
    'PENDING': 'lightgrey',
    'IGNORE': 'white',
}

RENDERED_FORMATS = {'.svg': 'svg', '.png': 'png'}


def _label(*lines):
    return '"' + '\\n'.join(str(line).replace('"', "'")
                            for line in lines if line) + '"'


def build_graph(flow):
    """The DiGraph of a flow document (``GET /os-flows/{id}``)."""
    graph = nx.DiGraph(name=flow.get('name') or flow.get('uuid'))
    root = 'flow'
    graph.add_node(root, shape='box', style='filled',
                   fillcolor=STATE_COLOURS.get(flow.get('state'), 'white'),
                   label=_label(flow.get('name'), flow.get('uuid'),
                                flow.get('state')))
    previous = root
    for index, atom in enumerate(flow.get('atoms') or ()):
        node = f'atom{index}'
        failure = atom.get('failure') or {}
        duration = atom.get('duration')
        graph.add_node(
            node, shape='ellipse', style='filled',
            fillcolor=STATE_COLOURS.get(atom.get('state'), 'white'),
            label=_label(atom.get('name'), atom.get('state'),
                         f'{duration:.3f} s' if duration else None,
                         failure.get('type')))
        graph.add_edge(previous, node)
        previous = node
    return graph


def to_dot(graph):
    """The DOT text of ``graph``."""
    return nx.drawing.nx_pydot.to_pydot(graph).to_string()


def write(graph, path):
    """Write ``graph`` to ``path``: DOT, or SVG/PNG by its suffix.

    Raises CLIError when Graphviz is needed and missing (the DOT text is
    then written next to ``path``, and the message says where).
    """
    suffix = os.path.splitext(path)[1].lower()
    text = to_dot(graph)
    fmt = RENDERED_FORMATS.get(suffix)
    if fmt is None:
        _write_text(path, text)
        return path
    dot = shutil.which('dot')
    if dot is None:
        fallback = os.path.splitext(path)[0] + '.dot'
        _write_text(fallback, text)
        raise cli_client.CLIError(
            f'Graphviz `dot` is not installed, so no {fmt.upper()}: wrote '
            f'the DOT text to {fallback} instead (install graphviz, or ask '
            f'for a .dot file)')
    with tempfile.NamedTemporaryFile('w', suffix='.dot') as source:
        source.write(text)
        source.flush()
        result = subprocess.run([dot, f'-T{fmt}', '-o', path, source.name],
                                capture_output=True, text=True)
    if result.returncode:
        raise cli_client.CLIError(
            f'Graphviz `dot` could not write {path}: '
            f'{result.stderr.strip().splitlines()[-1:] or result.returncode}')
    return path


def _write_text(path, text):
    try:
        with open(path, 'w') as out:
            out.write(text)
    except OSError as exc:
        raise cli_client.CLIError(f'cannot write {path}: {exc.strerror}')
