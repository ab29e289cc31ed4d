"""What a compute host tells its cell's scheduler about itself: its
resource provider, how its builds went, the claims it gives back.

Apart from the manager because none of it may hold a build up: a
scheduler that does not answer now (restarting, its database away) is
told again at the next heartbeat, or not at all when it was only advice;
what is still owed to it is the state this module keeps. The scheduler
(a duck-typed client, the manager's ``scheduler``) is passed to every
call, as to ``claims.ClaimReleaser``, so that the manager's is always
the one asked.
"""

import threading

from oslo_log import log as logging

from cellboot.builds import claims
from cellboot.compute import registration
from cellboot.conf import CONF
from cellboot import exception

LOG = logging.getLogger(__name__)


class SchedulerReports:
    """A host's reports to its scheduler, and what it still owes."""

    def __init__(self, host, cell_name):
        self.host = host
        self.cell_name = cell_name
        # Whether the scheduler has taken the provider report: until it
        # has, the host is not schedulable and every heartbeat reports.
        self.provider_reported = False
        # Whether the scheduler may hold failed builds of this host that a
        # success should clear: unknown at start, so the first success
        # clears; after that only failures make a success worth a call.
        self._failures_to_clear = True
        self._lock = threading.Lock()
        # Claims of builds that ended here (interrupted at start, failed,
        # or not for this host) that the scheduler did not take back
        # when asked (its database away): tried again at every heartbeat,
        # so that a build never waits on one.
        self._claims = claims.ClaimReleaser('build')

    def report_provider(self, context, scheduler, node):
        """Report ``node`` to the scheduler as a resource provider.

        A scheduler that does not answer yet is asked again at each
        heartbeat. The scheduler serves each mapped cell on a topic of
        its own, so a host whose ``[DEFAULT] cell_name`` names no cell it
        serves gets no answer either: the warning says to check that
        too. Any refusal (a cell that is not the one of this host's bus,
        a provider name taken by another node) is raised: it needs an
        operator.
        """
        try:
            scheduler.update_provider(
                context, uuid=node.uuid, name=self.host,
                cell_name=self.cell_name,
                inventories=registration.inventories(node),
                availability_zone=CONF.compute.availability_zone,
                traits=registration.configured_traits())
        except exception.RPCTimeout as exc:
            LOG.warning('Cannot report host %s to the scheduler yet, it is '
                        'not schedulable until then; retrying at the next '
                        'heartbeat: %s Check too that [DEFAULT] cell_name, '
                        '%s, is the name of this host\'s cell as '
                        '`cellboot-manage cell_v2 list_cells` shows it, '
                        'mapped before cellboot-scheduler started.',
                        self.host, exc, self.cell_name)
            return
        self.provider_reported = True
        LOG.info('Host %s reported to the scheduler as resource provider '
                 '%s in cell %s', self.host, node.uuid, self.cell_name)

    def record_build_result(self, context, scheduler, node, succeeded):
        """Tell the scheduler (BuildFailureWeigher) how the build went.

        Failures always; a success only when it clears failures, which
        spares every ordinary build a call to the scheduler.
        """
        with self._lock:
            report = not succeeded or self._failures_to_clear
            self._failures_to_clear = not succeeded
        if not report:
            return
        try:
            scheduler.record_build_result(context, node.uuid, succeeded)
        except Exception as exc:
            # Advice to the weigher, not part of the build: a scheduler
            # that cannot take it now (its database away) must not hold
            # the build up. A success not told is told with the next one.
            LOG.warning('Could not tell the scheduler that a build %s on '
                        'host %s (%s)', 'succeeded' if succeeded else
                        'failed', self.host, exc)
            if succeeded:
                with self._lock:
                    self._failures_to_clear = True

    def release_claim(self, context, scheduler, instance_uuid,
                      provider_uuid=None):
        """Give back what the instance holds (idempotent).

        ``provider_uuid``: only its claim on that provider (this host's);
        None: every claim (a build this host's restart interrupted).
        Never raises: a release the scheduler cannot do now is tried
        again at the next heartbeat (``retry_releases``), while the
        build goes on (handed back, ended, or dropped); one it refuses
        is logged.
        """
        self._claims.release(context, scheduler, instance_uuid,
                             provider_uuid=provider_uuid)

    def retry_releases(self, context, scheduler):
        """Try the releases the scheduler did not take again."""
        self._claims.retry(context, scheduler)
