"""The few Glance, Neutron and Placement answers nova-api needs to boot.

nova-api, asked to boot a server, reads the image from Glance (the image
and Glance's image schema), lists the ports Neutron holds for the
instance, and on delete (as itself: after discovering Neutron's
version) lists them again and asks Placement to drop the consumer's
allocations. A real nova-api under test needs those endpoints and
nothing more from them: this server answers them from memory, for one
image (``IMAGE_ID``), and records every request it got (``seen``), so
that a test can tell which calls nova-api made. Anything else gets a
404, and is recorded too.
"""

import http.server
import json
import re
import threading

IMAGE_ID = '155d900f-4e14-4e4c-a73d-069cbf4541e6'

_IMAGE = {
    'id': IMAGE_ID,
    'name': 'cirros',
    'status': 'active',
    'visibility': 'public',
    'protected': False,
    'min_disk': 0,
    'min_ram': 0,
    'size': 16338944,
    'disk_format': 'qcow2',
    'container_format': 'bare',
    'checksum': 'ee1eca47dc88f4879d8a229cc70a07c6',
    'owner': 'admin',
    'created_at': '2026-01-01T00:00:00Z',
    'updated_at': '2026-01-01T00:00:00Z',
    'tags': [],
    'hw_architecture': 'x86_64',
}

# What glanceclient needs of the schema to build its image model: the
# image's own fields are typed, anything else is an extra property.
_IMAGE_SCHEMA = {
    'name': 'image',
    'properties': {
        name: {'type': ['null', 'string', 'integer', 'boolean', 'array']}
        for name in _IMAGE},
    'additionalProperties': {'type': 'string'},
    'links': [],
}

_ROUTES = [
    ('GET', re.compile(r'^/v2/images/(?P<id>[^/?]+)$'), 'image'),
    ('GET', re.compile(r'^/v2/schemas/image$'), 'image_schema'),
    ('GET', re.compile(r'^/v2\.0/ports(\.json)?$'), 'ports'),
    ('GET', re.compile(r'^/v2\.0/extensions(\.json)?$'), 'extensions'),
    ('GET', re.compile(r'^/?$'), 'network_root'),
    ('GET', re.compile(r'^/placement/?$'), 'placement_root'),
    ('DELETE', re.compile(r'^/placement/allocations/[^/]+$'), 'no_content'),
]


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def _answer(self, status, body=None):
        data = b'' if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _route(self):
        path = self.path.split('?', 1)[0]
        self.server.seen.append((self.command, self.path))
        length = int(self.headers.get('Content-Length') or 0)
        if length:
            self.rfile.read(length)
        for method, pattern, name in _ROUTES:
            match = pattern.match(path)
            if method == self.command and match:
                return getattr(self, '_' + name)(**match.groupdict())
        return self._answer(404, {'error': f'no stand-in for {path}'})

    do_GET = do_DELETE = do_POST = do_PUT = _route

    def _image(self, id):
        if id != IMAGE_ID:
            return self._answer(404, {'error': f'no image {id}'})
        return self._answer(200, _IMAGE)

    def _image_schema(self):
        return self._answer(200, _IMAGE_SCHEMA)

    def _ports(self):
        return self._answer(200, {'ports': []})

    def _extensions(self):
        return self._answer(200, {'extensions': []})

    def _network_root(self):
        # Neutron's version document: nova-api's own (admin) client,
        # used by a local delete, discovers the API version first.
        here = f'http://{self.headers.get("Host")}'
        return self._answer(200, {'versions': [{
            'id': 'v2.0', 'status': 'CURRENT',
            'links': [{'href': f'{here}/v2.0/', 'rel': 'self'}]}]})

    def _placement_root(self):
        here = f'http://{self.headers.get("Host")}'
        return self._answer(200, {'versions': [{
            'id': 'v1.0', 'max_version': '1.39', 'min_version': '1.0',
            'status': 'CURRENT',
            'links': [{'href': f'{here}/placement/', 'rel': 'self'}]}]})

    def _no_content(self):
        return self._answer(204)


class StandIns:
    """The stand-in endpoints, served from a thread; ``url`` is theirs."""

    def __init__(self):
        self._server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                       _Handler)
        self._server.daemon_threads = True
        self._server.seen = []
        self.url = f'http://127.0.0.1:{self._server.server_port}'
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name='nova-standins', daemon=True)

    @property
    def seen(self):
        return list(self._server.seen)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._server.shutdown()
        self._server.server_close()
