"""What a request to the scheduler may touch, by where it arrived.

The scheduler is served on the API's bus (topic ``cellboot-scheduler``)
for the super conductor and the API, and on each cell's bus (topic
``cellboot-scheduler.<cell>``) for the compute hosts and conductors of
that cell. A cell's services are the least trusted callers: anything in
their messages (the context, a cell name, a hint) may be forged by a
compromised cell. So a request's rights come from the server that took
it, never from the message: each of the scheduler's RPC servers has one
access object (chosen by ``doors``):

* ``FullAccess`` — the API's bus: every provider, instance and cell;
* ``CellAccess`` — one cell's topic, or the plain topic on a bus that
  only that cell uses: that cell's resource providers, and the consumers
  whose instance mapping names that cell. ``update_provider`` creates
  or updates that cell's providers only (never moves one, never takes a
  host mapped to another cell), ``select_destinations`` places in that
  cell only, ``record_build_result`` counts for its hosts only;
* ``UnattributedAccess`` — the plain topic on a bus several cells share,
  where nothing tells which of them sent a request: every request is
  refused, naming the topic to call instead.

A refusal is ``CellNotAuthorized``, raised before anything is written;
the endpoint logs each one once. The checks read the API database with a
context of their own: the caller's context decides nothing.
"""

from oslo_utils import uuidutils

from cellboot import context as cb_context
from cellboot import exception
from cellboot.objects import cell_mapping as cell_mapping_obj
from cellboot.objects import host_mapping as host_mapping_obj
from cellboot.objects import instance_mapping as instance_mapping_obj
from cellboot.rpc import topics
from cellboot.scheduler.resources import providers
from cellboot.scheduler.resources import usage


def _uuid(value, what):
    """``value`` if it is a uuid; Invalid otherwise (a malformed call)."""
    if not isinstance(value, str) or not uuidutils.is_uuid_like(value):
        raise exception.Invalid(reason=f'{what} must be a uuid, not '
                                       f'{str(value)[:80]!r}')
    return value


def _uuids(values, what):
    if not isinstance(values, (list, tuple)):
        raise exception.Invalid(reason=f'{what} must be a list of uuids')
    return [_uuid(value, what) for value in values]


def _hinted_cells(request_spec):
    """The values of the spec's ``target_cell`` hint, as a list."""
    if not isinstance(request_spec, dict):
        raise exception.Invalid(reason='a request spec is a mapping')
    hints = request_spec.get('scheduler_hints') or {}
    if not isinstance(hints, dict):
        raise exception.Invalid(reason='scheduler_hints must be a mapping')
    value = hints.get('target_cell')
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


class FullAccess:
    """The API level's rights: anything the scheduler can do."""

    caller = 'the API transport'

    def select_destinations(self, request_spec, instance_uuids):
        """The cell uuid to place in (None: any cell)."""
        return None

    def update_provider(self, uuid, name, cell_name):
        """``(cell uuid, may move)`` for the provider's report."""
        context = cb_context.get_admin_context()
        cell = cell_mapping_obj.CellMapping.get_by_name(context, cell_name)
        return cell.uuid, True

    def claim_resources(self, consumer_uuid, provider_uuid):
        pass

    def release_resources(self, consumer_uuid, provider_uuid):
        pass

    def record_build_result(self, provider_uuid):
        pass


class _Refusing:
    """How an access object says no."""

    caller = None

    def refuse(self, method, reason):
        raise exception.CellNotAuthorized(method=method, caller=self.caller,
                                          reason=reason)


class CellAccess(_Refusing):
    """The rights of one cell's services: that cell's resources only."""

    def __init__(self, cell):
        self.cell_uuid = cell.uuid
        self.cell_name = cell.name
        self.caller = f'cell {cell.name} ({cell.uuid})'

    # -- the checks ----------------------------------------------------

    def _check_providers(self, method, provider_uuids):
        if not provider_uuids:
            return
        cells = providers.get_cells(cb_context.get_admin_context(),
                                    provider_uuids)
        for uuid in provider_uuids:
            if uuid not in cells:
                self.refuse(method, f'there is no resource provider '
                                    f'{uuid} in its cell')
            if cells[uuid] != self.cell_uuid:
                self.refuse(method, f'resource provider {uuid} belongs to '
                                    f'another cell')

    def _mapped_cell(self, method, consumer_uuid):
        """The cell uuid the consumer's instance mapping names.

        None when it has no mapping; refused when the mapping has no
        cell yet (the API level is still building it).
        """
        try:
            mapping = instance_mapping_obj.InstanceMapping \
                .get_by_instance_uuid(cb_context.get_admin_context(),
                                      consumer_uuid)
        except exception.InstanceMappingNotFound:
            return None
        if mapping.cell_mapping is None:
            self.refuse(method, f'instance {consumer_uuid} is not in a cell '
                                f'yet (the API level is still building it)')
        return mapping.cell_mapping.uuid

    def _check_consumer(self, method, consumer_uuid):
        cell_uuid = self._mapped_cell(method, consumer_uuid)
        if cell_uuid is None:
            self.refuse(method, f'consumer {consumer_uuid} is no instance '
                                f'of its cell (it has no instance mapping)')
        if cell_uuid != self.cell_uuid:
            self.refuse(method, f'instance {consumer_uuid} is in another '
                                f'cell')

    # -- per method ------------------------------------------------------

    def select_destinations(self, request_spec, instance_uuids):
        method = 'select_destinations'
        for target in _hinted_cells(request_spec):
            if target not in (self.cell_uuid, self.cell_name):
                self.refuse(method, f'target_cell {str(target)[:80]!r} is '
                                    f'not its own cell')
        for uuid in _uuids(instance_uuids, 'instance_uuids'):
            self._check_consumer(method, uuid)
        return self.cell_uuid

    def update_provider(self, uuid, name, cell_name):
        method = 'update_provider'
        _uuid(uuid, 'uuid')
        if not isinstance(name, str) or not 0 < len(name) <= 255:
            raise exception.Invalid(reason='a provider\'s name is its host '
                                           'name, 1 to 255 characters')
        if cell_name != self.cell_name:
            self.refuse(method, f'it reports a provider of cell '
                                f'{str(cell_name)[:80]!r}, not of its own')
        context = cb_context.get_admin_context()
        owner = providers.get_cells(context, [uuid]).get(uuid, self.cell_uuid)
        if owner != self.cell_uuid:
            self.refuse(method, f'resource provider {uuid} belongs to '
                                f'another cell, and a cell can neither '
                                f'change nor take another cell\'s '
                                f'providers')
        try:
            mapping = host_mapping_obj.HostMapping.get_by_host(context, name)
        except exception.HostMappingNotFound:
            pass
        else:
            if mapping.cell_mapping.uuid != self.cell_uuid:
                self.refuse(method, f'host {name} is mapped to another '
                                    f'cell')
        return self.cell_uuid, False

    def claim_resources(self, consumer_uuid, provider_uuid):
        method = 'claim_resources'
        self._check_providers(method, [_uuid(provider_uuid,
                                             'provider_uuid')])
        self._check_consumer(method, _uuid(consumer_uuid, 'consumer_uuid'))

    def release_resources(self, consumer_uuid, provider_uuid):
        """A consumer of this cell, on its providers.

        A consumer without an instance mapping (its instance was deleted
        and its mapping removed) may still hold allocations: those may be
        released if every one is on this cell's providers.
        """
        method = 'release_resources'
        _uuid(consumer_uuid, 'consumer_uuid')
        if provider_uuid is not None:
            self._check_providers(method, [_uuid(provider_uuid,
                                                 'provider_uuid')])
        cell_uuid = self._mapped_cell(method, consumer_uuid)
        if cell_uuid is None:
            held = usage.get_allocations_for_consumer(
                cb_context.get_admin_context(), consumer_uuid)
            self._check_providers(method, sorted(held))
        elif cell_uuid != self.cell_uuid:
            self.refuse(method, f'instance {consumer_uuid} is in another '
                                f'cell')

    def record_build_result(self, provider_uuid):
        self._check_providers('record_build_result', [
            _uuid(provider_uuid, 'provider_uuid')])


class UnattributedAccess(_Refusing):
    """The plain topic on a bus several cells share: no rights at all."""

    def __init__(self, cells):
        names = sorted(cell.name for cell in cells)
        self.caller = f'a service on the bus shared by cells ' \
                      f'{", ".join(names)}'
        self._reason = (
            f'topic {topics.SCHEDULER} on a bus several cells share cannot '
            f'tell which cell sent a request; the service must call '
            f'{topics.scheduler("<its cell>")} (upgrade it)')

    def select_destinations(self, request_spec, instance_uuids):
        self.refuse('select_destinations', self._reason)

    def update_provider(self, uuid, name, cell_name):
        self.refuse('update_provider', self._reason)

    def claim_resources(self, consumer_uuid, provider_uuid):
        self.refuse('claim_resources', self._reason)

    def release_resources(self, consumer_uuid, provider_uuid):
        self.refuse('release_resources', self._reason)

    def record_build_result(self, provider_uuid):
        self.refuse('record_build_result', self._reason)
