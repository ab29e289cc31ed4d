"""Stray claims: what a settled instance holds off its own host.

A build that fails on a host gives that host's claim back before it is
rescheduled, and nothing claims for the instance there again -- unless
a message does it late. A RabbitMQ restart delivers again a request a
service had taken but not acknowledged, and a scheduler can still run
a request whose caller gave up waiting and asked again; either can
claim a host for an instance that has since left it. The instance then
goes ACTIVE elsewhere holding two claims, and the first host's room is
lost until the instance is deleted.

The cell conductor's sweep gives such claims back: a claim of an
ACTIVE instance with no task under way on any provider but its host's
node (``usage.claims_off_host``), through the cell's scheduler, claim
by claim (never the instance's own). Only the cell's own database is
read: a cell heals itself. Claims of instances that are deleted, in
ERROR or absent from the cell are the super conductor's
(``unfinished_deletes``), which can tell a boot in flight from a claim
left behind. Idempotent, and safe with several conductors sweeping at
once (a release of nothing does nothing).
"""

from oslo_log import log as logging

from cellboot.builds import claims
from cellboot import context as cb_context
from cellboot.scheduler.resources import usage

LOG = logging.getLogger(__name__)

# Claims looked at per sweep.
PER_SWEEP = 500


class StrayClaims:
    """The cell conductor's check; ``manager`` is its manager.

    Uses ``manager.cell_mapping`` (the cell database) and
    ``manager.scheduler`` (``release_resources``).
    """

    def __init__(self, manager):
        self.manager = manager
        self.claims = claims.ClaimReleaser('instance')

    def sweep_once(self, context):
        """``{'released': stray claims given back}``."""
        with cb_context.target_cell(context,
                                    self.manager.cell_mapping) as cctxt:
            stray = usage.claims_off_host(cctxt, PER_SWEEP)
        released = 0
        for instance_uuid, provider_uuid in stray:
            LOG.warning('Instance %s is active on another host but holds a '
                        'claim on resource provider %s (re-made by a late '
                        'or repeated message); releasing it', instance_uuid,
                        provider_uuid)
            released += self.claims.release(
                context, self.manager.scheduler, instance_uuid,
                provider_uuid=provider_uuid)
        return {'released': released}
