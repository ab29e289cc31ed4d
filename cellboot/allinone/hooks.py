"""What a user of the one-process composition may choose, and the defaults.

``cellboot.allinone.deployment.Deployment`` is the only code that wires a
whole deployment in one process. ``cellboot all-in-one`` runs it with
these defaults; the functional tests' cluster and the end-to-end
benchmark run the very same composition with a subclass that overrides a
few of these methods (where the databases live, which buses, which virt
driver, an observer around each RPC endpoint, which HTTP server). So
what they test and measure is what the product ships, the per-cell
compute manager included, and a change to the composition reaches all
three at once instead of drifting in three copies.

Everything else is ordinary configuration, read from ``CONF`` as the
services read it anywhere (``[conductor] persist_flows``, ``[scheduler]
host_state_refresh_interval``, ``[fake_driver]`` ...): a caller sets
those options before ``Deployment.start``.
"""

import os

# The API level's bus: oslo.messaging's in-process driver.
TRANSPORT_URL = 'fake://'


class Hooks:
    """The choices of ``cellboot all-in-one``; subclass to change some.

    ``transport_url`` is the API level's bus. ``cells_share_bus`` puts
    every cell on that bus too (one vhost for everything, as a small
    deployment may have; the cells are then not confined from each
    other), where by default each
    cell gets a bus of its own.
    """

    transport_url = TRANSPORT_URL
    cells_share_bus = False

    def database_url(self, state_dir, name):
        """The URL of database ``name``: an SQLite file in ``state_dir``.

        ``name`` is ``api``, ``flows``, ``cell0`` or a cell's name
        (``cell1`` ...). A database that exists is reused as it is
        (synced, its cells' mappings kept).
        """
        return 'sqlite:///' + os.path.join(state_dir, name + '.sqlite')

    def cell_transport_url(self, name):
        """The bus of cell ``name``: its own vhost of the API's bus."""
        if self.cells_share_bus:
            return self.transport_url
        return f'{self.transport_url}/{name}'

    def driver(self, host):
        """The virt driver of compute host ``host``.

        None: the one ``[compute] driver`` names, as ``cellboot-compute``
        loads it.
        """
        return None

    def endpoint(self, server, endpoint):
        """What RPC server ``server`` (its host name) serves for ``endpoint``.

        The endpoint itself; an observer may wrap it (count the requests
        in flight, learn when a build settled, inject a fault) as long
        as what it serves keeps the endpoint's ``target`` and its
        ``exposed`` methods.
        """
        return endpoint

    def api_server(self, application, host, port):
        """The HTTP server of the REST API (``start``/``stop``/``wait``).

        Any class with the built-in server's constructor, ``port`` and
        ``url`` will do (how the benchmark compares servers).
        """
        # Imported here: the API pulls in webob and waitress, which a
        # composition without the REST API does not need.
        from cellboot.api import server as api_server
        return api_server.WSGIService(application, host, port)
