"""A cell's select_destinations: a claimed host per instance, plus alternates.

A cell's scheduler places in its own cell: the API level chose the cell
(``cellboot.scheduler.cells``) and sends the request with what it
resolved of the hints (the hinted instances and group members of this
cell, see ``request``). For each instance of the request, in order:

1. ``candidates.find`` runs the enabled filters over the in-memory host
   states;
2. the weighers order the survivors; the chosen host is picked at random
   among the best ``host_subset_size`` (or more: as many as the cell's
   schedulers seen deciding lately, ``_subset_size``) -- unless a host
   the API level found ``near`` (``preferred_providers``) survived: the
   best of those is taken;
3. its resources are claimed in the cell's database (atomic, compare-
   and-swap on the provider generation). If the claim fails, our copy of that
   host was stale: it and the next best hosts are re-read, the host is
   excluded for this instance, and selection starts again;
4. the claim is applied to the host states as soon as the host is
   chosen (and given back if the claim fails), so the next instance of
   the request, and concurrent requests, see the host with less room;
5. up to ``max_attempts - 1`` alternates are taken from the cell, best
   first: hosts that passed the filters, never the chosen one, not
   claimed (a cell conductor claims one when it reschedules).

A consumer that holds allocations in the cell already is placed anew:
what it held is given back first. The API level asks again after a
cell did not answer in time, and that cell may have claimed meanwhile.
The claim itself finds out (``claims.HeldAlready``), in its own
transaction: there is no read of its own for this before each decision.

A request of several instances outside a server group is first placed
whole: steps 1, 2, 4 and 5 for every instance, then one transaction
claims them all (``batch_claims``: each provider checked and swapped
once). If that batch does not go through at once (no room for all, a
race, a replayed claim), nothing of it is kept and the instances are
placed one at a time as above.

If an instance cannot be placed, the claims already made for the request
are released and NoValidHost is raised, naming the filter that removed
the last candidate hosts. Choices are serialized per process (one lock
around steps 1, 2, 4 and 5: the in-memory state must not change under a
decision) but claims are not, so that concurrent requests overlap their
database round trips; the database, not the lock, keeps claims honest.
"""

import collections
import random

import numpy as np
from oslo_log import log as logging
from oslo_utils import excutils

from cellboot.conf import CONF
from cellboot import exception
from cellboot.objects import selection as selection_obj
from cellboot.scheduler import candidates
from cellboot.scheduler import filters as filters_mod
from cellboot.scheduler import request as request_mod
from cellboot.scheduler.resources import batch_claims
from cellboot.scheduler.resources import changes
from cellboot.scheduler.resources import claims
from cellboot.scheduler import weighers as weighers_mod
from cellboot.scheduler.weighers import base as weigher_base

LOG = logging.getLogger(__name__)

# After a failed claim, the failed host and this many of the next best
# are re-read in one query, so that the retry does not walk stale hosts
# one claim at a time when other schedulers have filled them.
REFRESH_AFTER_FAILED_CLAIM = 32


def best_first(weights, count):
    """Indices of the ``count`` highest finite ``weights``, highest first.

    Hosts that failed the filters weigh -inf and are never returned.
    """
    count = min(count, int(np.count_nonzero(weights > -np.inf)))
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    if count == 1:
        return np.array([np.argmax(weights)])
    top = np.argpartition(-weights, count - 1)[:count]
    return top[np.argsort(-weights[top], kind='stable')]


def spread(weights, count):
    """Positions to choose among: the ``count`` best hosts, and every
    host that weighs as much as the last of them.

    Ties are common (hosts of one flavour, equally full: a fleet filling
    evenly ends with every host one slot from full), and ``best_first``
    breaks them by position, the same way in every scheduler of the
    cell: spread over "the best two", two schedulers would still pick
    between the same two of a hundred equal hosts. With ``count`` 1 the
    choice stays the one best host, as the operator asked.
    """
    best = best_first(weights, count)
    if count <= 1 or len(best) < count:
        return best
    return np.flatnonzero(weights >= weights[best[-1]])


class SchedulerManager:
    """Chooses hosts of one cell from a ``HostStateCache``, claims them."""

    def __init__(self, cache):
        self.cache = cache
        self.filters = filters_mod.load_filters(
            CONF.filter_scheduler.enabled_filters)
        self.weighers = weighers_mod.load_weighers(
            CONF.filter_scheduler.enabled_weighers)
        # Claims written for decisions (a batch counts each instance),
        # and how many of them failed and were retried on another host.
        self.claims_tried = 0
        self.failed_claims = 0
        # Instances found no host, by the step that removed the last
        # candidates (``Elimination.last_step``).
        self.no_valid_host = collections.Counter()
        # The cell's other schedulers' changes (``sync.Follower``), or
        # None: learnt at the periodic reloads and failed claims only.
        self.sync = None

    @property
    def origin(self):
        return None if self.sync is None else self.sync.origin

    def announce(self, context, deltas):
        """Tell the cell's other schedulers (``changes.announce``)."""
        if self.sync is not None and deltas:
            self.sync.claimed(context, deltas)

    def select_destinations(self, context, request_spec, instance_uuids,
                            return_alternates=True):
        """Claim a host for each instance; see the module docstring.

        Returns one list per instance: ``[chosen, alternate, ...]``, each
        a ``Selection`` dict. Raises NoValidHost (nothing left claimed).
        """
        request = request_mod.ScheduleRequest(request_spec)
        filters = self.filters
        context = self.cache.scope.context(context)
        self.cache.ensure_loaded(context)
        if self.sync is not None:
            self.sync.catch_up(context)
        request.resolve(context, instance_uuids)
        if len(instance_uuids) > 1 and not request.has_group:
            batch = self._place_batch(context, request, instance_uuids,
                                      return_alternates, filters)
            if batch is not None:
                return batch
        made = []
        try:
            for instance_uuid in instance_uuids:
                hosts = self._place(context, request, instance_uuid,
                                    return_alternates, filters)
                made.append((instance_uuid, hosts))
        except exception.NoValidHost as exc:
            # Counted here, where it leaves: a batch that found no room
            # chooses again one instance at a time.
            self.no_valid_host[getattr(exc, 'step', 'none')] += 1
            with excutils.save_and_reraise_exception():
                self._release(context, made)
        except Exception:
            with excutils.save_and_reraise_exception():
                self._release(context, made)
        return [[s.to_dict() for s in hosts] for _uuid, hosts in made]

    def _place(self, context, request, instance_uuid, return_alternates,
               filters):
        while True:
            with self.cache.locked() as states:
                chosen, mask, weights = self._choose(states, request,
                                                     instance_uuid, filters)
                uuid = states.uuids[chosen]
                # Taken now, so that decisions made while the claim is
                # written (other threads) see the host with less room.
                self.cache.add_usage(uuid, request.resources)
                hosts = [self._selection(states, chosen, request, True)]
                if return_alternates:
                    hosts += [self._selection(states, pos, request, False)
                              for pos in self._alternates(
                                  states, chosen, mask, weights)]
            # The claim is written without the lock: database round
            # trips of concurrent requests overlap.
            try:
                claimed = self._claim(context, request, instance_uuid, uuid)
            except Exception:
                with excutils.save_and_reraise_exception():
                    self.cache.add_usage(uuid, request.resources, sign=-1)
            if claimed:
                request.placed(uuid, hosts[0].service_host)
                return hosts
            self._after_failed_claim(context, request, uuid, states, weights)

    def _place_batch(self, context, request, instance_uuids,
                     return_alternates, filters):
        """Choose every host first, then claim them all at once.

        One claim transaction for the request (``batch_claims``) instead
        of one per instance. Only for requests without a server group,
        whose choices do not depend on where siblings landed. None when
        the batch could not be claimed at once (no room for one of them,
        a race, a replay): nothing is claimed then and the caller places
        them one at a time, which retries and explains a NoValidHost.
        """
        picks = []
        try:
            for instance_uuid in instance_uuids:
                with self.cache.locked() as states:
                    chosen, mask, weights = self._choose(
                        states, request, instance_uuid, filters)
                    uuid = states.uuids[chosen]
                    self.cache.add_usage(uuid, request.resources)
                    picks.append((instance_uuid, uuid, [
                        self._selection(states, chosen, request, True)]))
                    if return_alternates:
                        picks[-1][2].extend(
                            self._selection(states, pos, request, False)
                            for pos in self._alternates(
                                states, chosen, mask, weights))
            batch_claims.claim_all(
                context, [(instance_uuid, uuid)
                          for instance_uuid, uuid, _hosts in picks],
                request.resources, origin=self.origin)
        except BaseException as exc:
            for _instance_uuid, uuid, _hosts in picks:
                self.cache.add_usage(uuid, request.resources, sign=-1)
            if isinstance(exc, (exception.NoValidHost,
                                batch_claims.NotBatchable)):
                LOG.debug('Claiming %d instances one by one: %s',
                          len(instance_uuids), exc)
                return None
            raise
        deltas = {}
        for _instance_uuid, uuid, _hosts in picks:
            delta = deltas.setdefault(uuid, dict.fromkeys(request.resources,
                                                          0))
            for rc, amount in request.resources.items():
                delta[rc] += amount
        self.announce(context, deltas)
        for _instance_uuid, _uuid, hosts in picks:
            request.placed(hosts[0].compute_node_uuid, hosts[0].service_host)
        return [[s.to_dict() for s in hosts] for _i, _u, hosts in picks]

    def _choose(self, states, request, instance_uuid, filters):
        """``(position, mask, weights)`` of the host to claim, or raise."""
        mask, elimination = candidates.find(states, request, filters)
        if not mask.any():
            reason = elimination.reason()
            LOG.info('NoValidHost for instance %s: %s', instance_uuid,
                     reason)
            no_host = exception.NoValidHost(reason=reason)
            no_host.step = elimination.last_step()
            raise no_host
        weights = weigher_base.weigh(states, mask, request, self.weighers)
        preferred = [int(pos) for pos in states.positions(
            request.preferred_providers) if mask[pos]] \
            if request.preferred_providers else []
        if preferred:
            # A host named near (``colocation``) that can take it.
            chosen = preferred[int(np.argmax(weights[preferred]))]
        else:
            chosen = random.choice(spread(weights, self._subset_size()))
        return chosen, mask, weights

    def _subset_size(self):
        """How many of the best hosts the choice is made among.

        Schedulers that follow each other's claims (``sync``) hold the
        same host states: each picking the one best host, they would all
        claim it at once and all but one lose the swap. So the choice is
        spread over at least as many hosts as schedulers were seen
        deciding lately.
        """
        size = CONF.filter_scheduler.host_subset_size
        if self.sync is not None:
            size = max(size, self.sync.deciders())
        return size

    def _after_failed_claim(self, context, request, uuid, states, weights):
        """Give back the room taken and re-read the stale hosts.

        Our copy of the host was stale, and so may be the next best:
        they are re-read together before choosing again.
        """
        with self.cache.locked() as current:
            self.cache.add_usage(uuid, request.resources, sign=-1)
            stale = {uuid}
            if current is states:  # no reload since: positions still hold
                stale.update(states.uuids[pos] for pos in best_first(
                    weights, REFRESH_AFTER_FAILED_CLAIM))
        self.cache.refresh_providers(context, stale)

    def _claim(self, context, request, instance_uuid, uuid):
        """Claim on ``uuid``; False (host excluded) when it failed.

        What the consumer held in the cell before is given back first.
        """
        self.claims_tried += 1
        try:
            try:
                claims.claim_resources(context, instance_uuid, uuid,
                                       request.resources, first=True,
                                       origin=self.origin)
            except claims.HeldAlready:
                LOG.info('Instance %s held allocations in this cell '
                         'already: giving them back before placing it '
                         'anew', instance_uuid)
                self._release(context, [(instance_uuid, None)])
                claims.claim_resources(context, instance_uuid, uuid,
                                       request.resources,
                                       origin=self.origin)
            self.announce(context, {uuid: dict(request.resources)})
            return True
        except (exception.ClaimFailed, exception.ClaimConflict) as exc:
            self.failed_claims += 1
            LOG.debug('Claim for instance %s on %s failed (%s); trying '
                      'another host', instance_uuid, uuid, exc)
        request.failed_providers.add(uuid)
        return False

    @staticmethod
    def _alternates(states, chosen, mask, weights):
        """Up to max_attempts - 1 other hosts of the cell."""
        count = CONF.scheduler.max_attempts - 1
        if count < 1:
            return []
        in_cell = np.flatnonzero(mask)
        in_cell = in_cell[in_cell != chosen]
        return in_cell[best_first(weights[in_cell], count)]

    @staticmethod
    def _selection(states, pos, request, claimed):
        return selection_obj.Selection(
            service_host=states.service_hosts[pos],
            nodename=states.nodenames[pos],
            compute_node_uuid=states.uuids[pos],
            cell_uuid=states.cell_uuid(pos),
            allocation_request=dict(request.resources),
            claimed=claimed)

    def _release(self, context, made):
        """Give back the claims of a request that cannot complete (on its
        chosen host; everywhere in the cell for a host of None)."""
        for instance_uuid, hosts in made:
            provider = hosts[0].compute_node_uuid if hosts else None
            try:
                released = claims.release_resources(
                    context, instance_uuid, provider, origin=self.origin)
            except Exception:
                LOG.exception('Could not release the claim of instance %s '
                              'on %s; its allocations stay until the '
                              'instance is cleaned up', instance_uuid,
                              provider or 'any provider of the cell')
                continue
            for provider_uuid, resources in released.items():
                self.cache.add_usage(provider_uuid, resources, sign=-1)
            self.announce(context, {uuid: changes.released(amounts)
                                    for uuid, amounts in released.items()})
