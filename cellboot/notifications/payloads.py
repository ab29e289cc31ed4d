"""The payloads of cellboot's notifications, in Nova's versioned envelope.

Every payload goes on the bus as Nova's versioned notifications carry
theirs::

    {"nova_object.name": "InstanceActionPayload",
     "nova_object.namespace": "cellboot",
     "nova_object.version": "1.0",
     "nova_object.data": {...}}

so that a consumer written for Nova's notifications (a billing or audit
service) reads them with the code it has; the namespace says they are
cellboot's, whose versions are its own.

Plain dataclasses with an explicit ``VERSION``, not oslo.versionedobjects:
cellboot only sends these (it never receives one back, so it needs no
backporting to an older version, no remotable methods, no object
registry), and its RPC carries plain JSON already (docs/rpc.md); the
library would be a dependency for its envelope alone. The rules are
oslo.versionedobjects' all the same: adding a field bumps the minor
version, removing or changing one the major, and the samples in
``docs/notification_samples/`` change with it (their test fails
otherwise).
"""

import dataclasses
import datetime
import typing

NAMESPACE = 'cellboot'


def _primitive(value):
    """A JSON value of ``value``: payloads nested, datetimes ISO 8601."""
    if isinstance(value, Payload):
        return value.to_primitive()
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None).isoformat() + 'Z'
    if isinstance(value, dict):
        return {key: _primitive(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_primitive(item) for item in value]
    return value


@dataclasses.dataclass
class Payload:
    """A payload: its fields, and its name and version for the envelope.

    ``NAME`` is the class's own name, as Nova names its payloads, so a
    subclass never writes it; ``VERSION`` is each payload's own, and
    every subclass states it (the module docstring says when it changes).
    """

    NAME: typing.ClassVar[str] = 'Payload'
    VERSION: typing.ClassVar[str] = '1.0'

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.NAME = cls.__name__

    def to_primitive(self):
        return {
            'nova_object.name': self.NAME,
            'nova_object.namespace': NAMESPACE,
            'nova_object.version': self.VERSION,
            'nova_object.data': {
                field.name: _primitive(getattr(self, field.name))
                for field in dataclasses.fields(self)},
        }


@dataclasses.dataclass
class ExceptionPayload(Payload):
    """What went wrong: the exception, its message, where it was raised.

    Built from an exception (``function_name`` and ``module_name`` from
    the innermost frame of its traceback, when it has one) or from a
    message alone (what cellboot's flows record for a failure that
    crossed the bus: the type is then ``BuildFailed``).
    """

    VERSION: typing.ClassVar[str] = '1.0'

    exception: str
    exception_message: str
    function_name: str
    module_name: str

    @classmethod
    def from_error(cls, error):
        if not isinstance(error, BaseException):
            return cls('BuildFailed', str(error), '', '')
        function, module = '', type(error).__module__
        innermost = error.__traceback__
        while innermost is not None and innermost.tb_next is not None:
            innermost = innermost.tb_next
        if innermost is not None:
            frame = innermost.tb_frame
            function = frame.f_code.co_name
            module = frame.f_globals.get('__name__', module)
        return cls(type(error).__name__, str(error), function, module)


@dataclasses.dataclass
class FlavorPayload(Payload):
    """The flavor an instance was built with (its copy in the instance)."""

    VERSION: typing.ClassVar[str] = '1.0'

    flavorid: str
    name: str
    vcpus: int
    memory_mb: int
    root_gb: int

    @classmethod
    def from_flavor(cls, flavor):
        flavor = flavor or {}
        return cls(str(flavor.get('flavorid') or flavor.get('id') or ''),
                   flavor.get('name') or '', int(flavor.get('vcpus') or 0),
                   int(flavor.get('memory_mb') or 0),
                   int(flavor.get('root_gb') or 0))


@dataclasses.dataclass
class InstanceActionPayload(Payload):
    """An instance, as Nova's ``instance.<action>.<phase>`` carry it.

    Nova's names for the fields it shares (``tenant_id``, ``state``,
    ``image_uuid``...); ``fault`` is set on an ``error`` phase only.
    """

    VERSION: typing.ClassVar[str] = '1.0'

    uuid: str
    display_name: typing.Optional[str]
    tenant_id: typing.Optional[str]
    user_id: typing.Optional[str]
    reservation_id: typing.Optional[str]
    host: typing.Optional[str]
    node: typing.Optional[str]
    state: typing.Optional[str]
    task_state: typing.Optional[str]
    availability_zone: typing.Optional[str]
    image_uuid: typing.Optional[str]
    created_at: typing.Optional[datetime.datetime]
    launched_at: typing.Optional[datetime.datetime]
    deleted_at: typing.Optional[datetime.datetime]
    flavor: FlavorPayload
    fault: typing.Optional[ExceptionPayload] = None

    @classmethod
    def from_instance(cls, instance, fault=None):
        """``instance``: a cellboot Instance (or anything with its fields)."""
        def get(name):
            return getattr(instance, name, None)
        return cls(
            uuid=instance.uuid, display_name=get('display_name'),
            tenant_id=get('project_id'), user_id=get('user_id'),
            reservation_id=get('reservation_id'), host=get('host'),
            node=get('node'), state=get('vm_state'),
            task_state=get('task_state'),
            availability_zone=get('availability_zone'),
            image_uuid=get('image_ref'), created_at=get('created_at'),
            launched_at=get('launched_at'), deleted_at=get('deleted_at'),
            flavor=FlavorPayload.from_flavor(get('flavor')),
            fault=None if fault is None else ExceptionPayload.from_error(
                fault))


@dataclasses.dataclass
class ComputeTaskPayload(Payload):
    """A build attempt that failed on a host and goes back to the cell
    conductor's ``build_instances`` (a reschedule)."""

    VERSION: typing.ClassVar[str] = '1.0'

    instance_uuid: str
    host: str
    state: str
    reason: ExceptionPayload


@dataclasses.dataclass
class FlowPayload(Payload):
    """A persisted TaskFlow flow of cellboot (``cellboot-manage flows``)."""

    VERSION: typing.ClassVar[str] = '1.0'

    uuid: str
    name: typing.Optional[str]
    state: typing.Optional[str]
    owner: typing.Optional[str]
    reason: typing.Optional[ExceptionPayload] = None

    @classmethod
    def from_flow(cls, flow, reason=None):
        """``flow``: a TaskFlow FlowDetail, anything with its ``uuid``
        (and, if it has them, ``name``, ``state`` and ``meta``), or the
        flow's uuid alone."""
        meta = getattr(flow, 'meta', None) or {}
        return cls(uuid=str(getattr(flow, 'uuid', flow)),
                   name=getattr(flow, 'name', None),
                   state=getattr(flow, 'state', None),
                   owner=meta.get('owner'),
                   reason=None if reason is None
                   else ExceptionPayload.from_error(reason))
