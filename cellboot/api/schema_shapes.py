"""The building blocks of the response schemas: closed objects, paged
listings, the types every representation repeats.

A module of their own because two schema modules build on them
(``view_schemas``, what the REST API's users read, and
``admin_view_schemas``, what only administrators read), and every
listing must be paged and every object closed the same way in both.
"""

STRING = {'type': 'string'}
NULLABLE_STRING = {'type': ['string', 'null']}
COUNT = {'type': 'integer', 'minimum': 0}
# Amounts keyed by resource class, and lists of names (traits, cells).
BY_CLASS = {'type': 'object', 'additionalProperties': COUNT}
NAME_LIST = {'type': 'array', 'items': STRING}


def closed(properties, required=None):
    """An object with exactly ``properties``; all required by default."""
    return {'type': 'object', 'properties': properties,
            'required': sorted(properties if required is None
                               else required),
            'additionalProperties': False}


LINKS = {'type': 'array', 'items': closed({'rel': STRING,
                                           'href': STRING})}


def listing(key, item, **more):
    """``{key: [item, ...]}``, the shape of every listing.

    Every listing is paged: ``<key>_links`` holds the link to the next
    page (``rel: next``) when there may be one. ``more`` are further
    keys, always present.
    """
    return closed(dict({key: {'type': 'array', 'items': item},
                        f'{key}_links': dict(
                            LINKS, description='The next page, when '
                                               'there may be one.')},
                       **more),
                  required=[key, *more])
