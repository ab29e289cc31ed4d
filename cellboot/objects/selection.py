"""Selection: one host the scheduler offers for one instance.

``select_destinations`` answers, per instance, with a list of selections:
the chosen host first (its resources already claimed, ``claimed`` True),
then the alternates of the same cell, best first, unclaimed, which a cell
conductor claims one by one when it reschedules. They travel as plain
dicts (``to_dict``/``from_dict``) in RPC payloads and flow results.
``allocation_request`` is what was, or is to be, claimed: {rc: amount}.
The API level's scheduler adds ``pools`` to the selection dicts of an
instance that draws from shared pools (``cellboot.scheduler.pools``):
what the boot flow's ``claim-pool`` claims there.
"""

from cellboot.objects import base


class Selection(base.DomainObject):
    """A host for one instance: where it is, and what to claim there."""

    FIELDS = ('service_host', 'nodename', 'compute_node_uuid', 'cell_uuid',
              'allocation_request', 'claimed')

    def to_dict(self):
        # Flat values: a shallow copy of the one dict does (the generic
        # deep copy costs ~0.1 ms per decision at three selections each).
        values = {name: getattr(self, name) for name in self.FIELDS}
        values['allocation_request'] = dict(self.allocation_request or {})
        return values

    @classmethod
    def from_dict(cls, values):
        return cls(**{name: values.get(name) for name in cls.FIELDS})
