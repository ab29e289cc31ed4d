"""docs/rpc.md says what the code does.

The document is the contract other API services build against, so it is
read here the way they read it: each interface's table (topic, version,
exchange, client, endpoint), each method's heading (name, arguments,
cast or call), the payload schema with its example, and the example
sender, which is run against a conductor endpoint on ``fake://``.
"""

import ast
import importlib
import inspect
import json
import os
import re
import uuid

import jsonschema

from cellboot.conf import CONF
from cellboot import rpc
from cellboot.rpc import client as rpc_client
from cellboot.rpc import topics
from tests import base
from tests.functional.rpc import base as rpc_base

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DOC = os.path.join(REPO_ROOT, 'docs', 'rpc.md')

# Section title -> the topic the code uses for it.
INTERFACES = {
    'Super conductor': topics.CONDUCTOR,
    'Cell conductor': topics.cell_conductor('<cell_name>'),
    'Scheduler': topics.SCHEDULER,
    'Cell scheduler': topics.scheduler('<cell_name>'),
    'Compute host': topics.compute('<cell_name>'),
}

# Client arguments that route a message rather than travel in it.
ROUTING_ARGUMENTS = {'host'}

METHOD = re.compile(r'^### `(?P<name>\w+)\((?P<args>[^)]*)\)` '
                    r'— (?P<kind>cast|call)$', re.MULTILINE)
TABLE_ROW = re.compile(r'^\| (?P<key>[^|]+?) \| (?P<value>[^|]+?) \|$',
                       re.MULTILINE)
CODE_BLOCK = re.compile(r'^```(?P<lang>\w+)\n(?P<code>.*?)^```$',
                        re.MULTILINE | re.DOTALL)
NO_DEFAULT = inspect.Parameter.empty


def _read_doc():
    with open(DOC, encoding='utf-8') as doc:
        return doc.read()


def _sections(text):
    """{'## ' title: body} of the document."""
    parts = re.split(r'^## (.+)$', text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def _literal(value):
    match = re.search(r'`([^`]+)`', value)
    return match.group(1) if match else value.strip()


def _import(dotted):
    module, _, name = dotted.rpartition('.')
    return getattr(importlib.import_module(module), name)


class Interface:
    """One interface as the document describes it."""

    def __init__(self, title, body):
        self.title = title
        rows = {m.group('key'): m.group('value')
                for m in TABLE_ROW.finditer(body)}
        self.topic = _literal(rows['topic'])
        self.version = _literal(rows['version'])
        self.exchange = _literal(rows['exchange'])
        self.client = _import(_literal(rows['client']))
        self.endpoint = _import(_literal(rows['endpoint']))
        self.methods = {m.group('name'): (self._arguments(m.group('args')),
                                          m.group('kind'))
                        for m in METHOD.finditer(body)}
        self.code_blocks = [(m.group('lang'), m.group('code'))
                            for m in CODE_BLOCK.finditer(body)]

    @staticmethod
    def _arguments(text):
        """[(name, default or NO_DEFAULT)] of a documented signature."""
        arguments = []
        for part in filter(None, (p.strip() for p in text.split(','))):
            name, _, default = part.partition('=')
            arguments.append((name, ast.literal_eval(default)
                              if default else NO_DEFAULT))
        return arguments


def _parameters(function, skip):
    """[(name, default)] of ``function`` without self, context, ``skip``."""
    parameters = list(inspect.signature(function).parameters.values())
    return [(p.name, p.default) for p in parameters[2:]
            if p.name not in skip]


class KindRecorder:
    """Takes a client's place to see whether a method calls or casts."""

    def __init__(self):
        self.kinds = []

    def call(self, ctxt, method, **kwargs):
        self.kinds.append('call')

    def cast(self, ctxt, method, **kwargs):
        self.kinds.append('cast')


class RPCDocTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.addCleanup(rpc.cleanup)
        self.sections = _sections(_read_doc())
        self.interfaces = {title: Interface(title, self.sections[title])
                           for title in INTERFACES if title in self.sections}

    def _new_client(self, interface):
        transport = rpc.get_transport('fake://')
        if 'cell_name' in inspect.signature(interface.client).parameters:
            return interface.client(cell_name='cell1', transport=transport)
        return interface.client(transport)

    def _schema_and_example(self):
        blocks = [json.loads(code) for lang, code in
                  self.interfaces['Super conductor'].code_blocks
                  if lang == 'json']
        return blocks[0], blocks[1]

    def test_every_interface_has_a_section(self):
        self.assertEqual(sorted(INTERFACES), sorted(self.interfaces))

    def test_documented_topics_are_the_code_topics(self):
        self.assertEqual(INTERFACES, {title: interface.topic for title,
                                      interface in self.interfaces.items()})

    def test_documented_versions_are_the_endpoint_target_versions(self):
        self.assertEqual(
            {title: interface.version
             for title, interface in self.interfaces.items()},
            {title: interface.endpoint.target.version
             for title, interface in self.interfaces.items()})

    def test_documented_versions_are_the_client_version(self):
        self.assertEqual({rpc_client.VERSION},
                         {i.version for i in self.interfaces.values()})

    def test_documented_exchange_is_the_default_control_exchange(self):
        self.assertEqual({CONF.control_exchange},
                         {i.exchange for i in self.interfaces.values()})

    def test_documented_methods_are_the_client_methods(self):
        for title, interface in self.interfaces.items():
            public = sorted(
                name for name, _ in inspect.getmembers(
                    interface.client, inspect.isfunction)
                if not name.startswith('_'))
            self.assertEqual(sorted(interface.methods), public, title)

    def test_documented_arguments_are_the_client_arguments(self):
        for title, interface in self.interfaces.items():
            for name, (arguments, _kind) in interface.methods.items():
                self.assertEqual(
                    [argument for argument, _ in arguments],
                    [argument for argument, _ in _parameters(
                        getattr(interface.client, name), ROUTING_ARGUMENTS)],
                    f'{title} client: {name}')

    def test_documented_arguments_are_the_endpoint_arguments(self):
        for title, interface in self.interfaces.items():
            for name, (arguments, _kind) in interface.methods.items():
                served = _parameters(getattr(interface.endpoint, name), ())
                self.assertEqual([argument for argument, _ in arguments],
                                 [argument for argument, _ in served],
                                 f'{title} endpoint: {name}')
                for (argument, default), (_, served_default) in zip(
                        arguments, served):
                    if default is not NO_DEFAULT:
                        self.assertEqual(default, served_default,
                                         f'{title}: {name}({argument}=)')

    def test_documented_kind_is_what_the_client_sends(self):
        for title, interface in self.interfaces.items():
            api = self._new_client(interface)
            for name, (arguments, kind) in interface.methods.items():
                api.client = KindRecorder()
                values = {p: None for p, _ in _parameters(
                    getattr(interface.client, name), ())}
                getattr(api, name)(rpc_base.user_context(), **values)
                self.assertEqual([kind], api.client.kinds,
                                 f'{title}: {name}')

    def test_payload_schema_is_a_valid_json_schema(self):
        schema, _example = self._schema_and_example()

        jsonschema.Draft202012Validator.check_schema(schema)

    def test_payload_example_matches_the_schema(self):
        schema, example = self._schema_and_example()

        jsonschema.validate(example, schema,
                            cls=jsonschema.Draft202012Validator)

    def test_payload_schema_requires_the_instance_uuid(self):
        schema, example = self._schema_and_example()
        del example['build_requests'][0]['instance_uuid']

        self.assertRaises(jsonschema.ValidationError, jsonschema.validate,
                          example, schema,
                          cls=jsonschema.Draft202012Validator)

    def test_example_sender_reaches_the_super_conductor(self):
        _schema, example = self._schema_and_example()
        [sender] = [code for lang, code in
                    self.interfaces['Super conductor'].code_blocks
                    if lang == 'python']
        namespace = {}
        exec(compile(sender, DOC, 'exec'), namespace)
        transport = rpc.get_transport('fake://')
        buses = self.useFixture(rpc_base.Buses())
        conductor = rpc_base.ConductorEndpoint()
        buses.serve('conductor-1', topics.CONDUCTOR, [conductor], transport)
        context = {'user_id': 'alice', 'project_id': 'demo',
                   'request_id': f'req-{uuid.uuid4()}', 'is_admin': False,
                   'roles': ['member']}

        namespace['cast_boot'](transport, context, **example)

        [(_method, ctx, kwargs)] = conductor.wait_for(1)
        self.assertEqual(example, kwargs)
        self.assertEqual(('alice', context['request_id']),
                         (ctx.user_id, ctx.request_id))
