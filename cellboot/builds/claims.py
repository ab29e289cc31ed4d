"""Giving back the claims of builds that ended, until the scheduler has.

Kept apart from ``fates`` because it is state held by a long-lived
caller (a compute host, a conductor's sweeper) across its heartbeats,
where the fates are one-shot steps.
"""

from oslo_log import log as logging

from cellboot import exception

LOG = logging.getLogger(__name__)


class ClaimReleaser:
    """Gives back the claims of builds that ended, until it is done.

    A release the scheduler (the caller's client) does not answer is
    logged and kept, and ``retry`` (called at the caller's next sweep or
    heartbeat) tries it again: a claim that outlives its build is a leak
    nobody else would find, since the instance is no longer building. A
    release the scheduler refuses (the instance is not of the caller's
    cell) is logged as an error and dropped: asking again cannot help.
    """

    def __init__(self, what):
        self.what = what
        self.pending = set()

    def release(self, context, scheduler, instance_uuid, provider_uuid=None):
        """Release the instance's claims; whether they went.

        ``provider_uuid``: only the claim on that provider (a compute
        host gives back its own, never the alternate's that a reschedule
        may hold by the time a retry runs); None: every claim.
        """
        key = (instance_uuid, provider_uuid)
        try:
            if provider_uuid is None:
                scheduler.release_resources(context, instance_uuid)
            else:
                scheduler.release_resources(context, instance_uuid,
                                            provider_uuid=provider_uuid)
        except exception.CellNotAuthorized as exc:
            LOG.error('The scheduler refused to release the claims of %s '
                      '%s: %s', self.what, instance_uuid, exc)
            self.pending.discard(key)
            return False
        except Exception as exc:
            LOG.warning('Could not release the claims of %s %s yet (%s); '
                        'trying again later', self.what, instance_uuid, exc)
            self.pending.add(key)
            return False
        self.pending.discard(key)
        return True

    def retry(self, context, scheduler):
        """Try the releases that failed again."""
        for instance_uuid, provider_uuid in sorted(
                self.pending, key=lambda key: (key[0], key[1] or '')):
            self.release(context, scheduler, instance_uuid,
                         provider_uuid=provider_uuid)
