"""What a request to a cell's scheduler may touch: that cell, and no more.

A cell's scheduler is served on the cell's bus, topic
``cellboot-scheduler.<cell>``, for the cell's compute hosts and
conductors and for the API level. Anything in a message there (the
context, a cell name, a hint) may be forged by a compromised cell, so
the rights come from where the scheduler runs, never from the message:
a cell's scheduler holds its own cell's database and nothing else, so
whatever it is asked, it can only ever write its own cell's providers
and allocations. ``CellAccess`` adds the checks that keep its own
cell's services honest within it, and refuses, before anything is
written:

* ``update_provider`` of a host that says it is in another cell (a host
  configured with another cell's name is on the wrong bus);
* ``claim_resources`` for a consumer that is no instance of the cell
  (the cell conductors claim alternates for the cell's own instances);
* malformed uuids and names.

A refusal is ``CellNotAuthorized`` (or ``Invalid``); the endpoint logs
each one once.
"""

from oslo_utils import uuidutils

from cellboot import exception
from cellboot.objects import instance as instance_obj


def uuid_of(value, what):
    """``value`` if it is a uuid; Invalid otherwise (a malformed call)."""
    if not isinstance(value, str) or not uuidutils.is_uuid_like(value):
        raise exception.Invalid(reason=f'{what} must be a uuid, not '
                                       f'{str(value)[:80]!r}')
    return value


def uuids_of(values, what):
    if not isinstance(values, (list, tuple)):
        raise exception.Invalid(reason=f'{what} must be a list of uuids')
    return [uuid_of(value, what) for value in values]


class CellAccess:
    """The rights of whoever reaches the scheduler of one cell."""

    def __init__(self, scheduler):
        self.scheduler = scheduler
        self.cell_name = scheduler.cell_name
        self.caller = f'the bus of cell {self.cell_name}'

    def refuse(self, method, reason):
        raise exception.CellNotAuthorized(method=method, caller=self.caller,
                                          reason=reason)

    def select_destinations(self, request_spec, instance_uuids):
        if not isinstance(request_spec, dict):
            raise exception.Invalid(reason='a request spec is a mapping')
        uuids_of(instance_uuids, 'instance_uuids')

    def update_provider(self, uuid, name, cell_name):
        uuid_of(uuid, 'uuid')
        if not isinstance(name, str) or not 0 < len(name) <= 255:
            raise exception.Invalid(reason='a provider\'s name is its host '
                                           'name, 1 to 255 characters')
        if cell_name != self.cell_name:
            self.refuse('update_provider', f'it reports a provider of cell '
                                           f'{str(cell_name)[:80]!r}, not '
                                           f'of this one')

    def claim_resources(self, context, consumer_uuid, provider_uuid):
        uuid_of(provider_uuid, 'provider_uuid')
        uuid_of(consumer_uuid, 'consumer_uuid')
        try:
            instance_obj.Instance.get_by_uuid(
                self.scheduler.scope.context(context), consumer_uuid)
        except exception.InstanceNotFound:
            self.refuse('claim_resources', f'consumer {consumer_uuid} is no '
                                           f'instance of the cell')

    def release_resources(self, consumer_uuid, provider_uuid):
        uuid_of(consumer_uuid, 'consumer_uuid')
        if provider_uuid is not None:
            uuid_of(provider_uuid, 'provider_uuid')

    def record_build_result(self, provider_uuid):
        uuid_of(provider_uuid, 'provider_uuid')
