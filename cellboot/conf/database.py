"""The ``[database]`` group: the cell database of services inside a cell.

These are oslo.db's own options. Compute hosts and cell conductors use this
connection; API-level services reach cell databases through
``cell_mappings.database_connection`` instead.
"""

from oslo_db import options as oslo_db_options


def register_opts(conf):
    oslo_db_options.set_defaults(conf)


def list_opts():
    return {'database': oslo_db_options.database_opts}
