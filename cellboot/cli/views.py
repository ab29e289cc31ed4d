"""Reading the API's server and flow documents, whatever their age.

Nova names a server's host ``OS-EXT-SRV-ATTR:host`` (admins only) and
its reservation ``OS-EXT-SRV-ATTR:reservation_id``; the plain names are
accepted too. One place reads them, so the commands and the all-in-one
demo agree on what a server shows.
"""

HOST_KEYS = ('OS-EXT-SRV-ATTR:host', 'host')
CELL_KEYS = ('cellboot:cell', 'cell', 'cell_name', 'OS-EXT-SRV-ATTR:cell')
RESERVATION_KEYS = ('OS-EXT-SRV-ATTR:reservation_id', 'reservation_id')

# Statuses in which a server stays until someone acts.
FINAL_STATUSES = frozenset({'ACTIVE', 'ERROR', 'DELETED'})


def _first(document, keys):
    for key in keys:
        if document.get(key):
            return document[key]
    return None


def host(server):
    return _first(server, HOST_KEYS)


def cell(server):
    return _first(server, CELL_KEYS)


def reservation_id(server):
    return _first(server, RESERVATION_KEYS)


def fault_message(server):
    fault = server.get('fault') or {}
    return fault.get('message')


def fault_details(server):
    """What went wrong as the services saw it; only admins are sent it."""
    fault = server.get('fault') or {}
    return fault.get('details')


def is_final(server):
    return server.get('status') in FINAL_STATUSES


def flavor_id(server):
    flavor = server.get('flavor')
    if isinstance(flavor, dict):
        return flavor.get('id') or flavor.get('original_name')
    return flavor
