"""The claims of a whole multi-create in one transaction.

``claims.claim_resources`` writes one consumer's allocations per
transaction: a multi-create of 500 on SQLite spent most of its
``schedule`` step (0.5-1 s) paying 500 transactions. ``claim_all``
writes every instance's allocations of one request at once, with the
same guarantees: each provider touched is read (generation, inventories,
usages) and swapped to its next generation once, in provider id order
(as releases lock them), and only if the sum of its new allocations
fits. Any misfit or lost race rolls the whole batch back and raises;
the caller then claims one instance at a time, the path that retries
and moves to other hosts. Consumers that already hold allocations (a
replayed claim) are left to that path too: it knows how to replace them.
"""

import collections

import sqlalchemy as sa

from cellboot.db import retry
from cellboot import exception
from cellboot.scheduler.resources import changes
from cellboot.scheduler.resources import claims
from cellboot.scheduler.resources import contention
from cellboot.scheduler.resources import tables
from cellboot.scheduler.resources import usage

_PROVIDERS = tables.PROVIDERS
_ALLOCATIONS = tables.ALLOCATIONS


class NotBatchable(Exception):
    """The batch cannot be claimed at once; claim one by one instead."""


@retry.on_contention
@tables.writer
def claim_all(context, placements, resources, origin=None):
    """Allocate ``resources`` to each consumer on its provider, at once.

    ``placements``: ``[(consumer_uuid, provider_uuid), ...]``. Raises
    NotBatchable (nothing written) when a provider is gone, a consumer
    already holds allocations, the sum on a provider does not fit, or a
    provider changed meanwhile. ``origin``: as for ``claims``.
    """
    resources = claims.validated(resources)
    consumers = [consumer for consumer, _provider in placements]
    if context.session.execute(sa.select(_ALLOCATIONS.c.id).where(
            _ALLOCATIONS.c.consumer_id.in_(consumers)).limit(1)).first():
        raise NotBatchable('a consumer already holds allocations')
    by_provider = collections.Counter(
        provider for _consumer, provider in placements)
    rows = context.session.execute(sa.select(
        _PROVIDERS.c.id, _PROVIDERS.c.uuid, _PROVIDERS.c.generation).where(
        _PROVIDERS.c.uuid.in_(list(by_provider)))).all()
    if len(rows) != len(by_provider):
        raise NotBatchable('a resource provider is gone')
    ids = {}
    for provider in sorted(rows, key=lambda row: row.id):
        _check_fit(context, provider, by_provider[provider.uuid],
                   resources)
        try:
            contention.compare_and_swap(context, provider.id,
                                        provider.generation)
        except contention.GenerationConflict as exc:
            raise NotBatchable(str(exc))
        ids[provider.uuid] = provider.id
    changes.announce(context, ids, origin)
    context.session.execute(sa.insert(_ALLOCATIONS), [
        {'resource_provider_id': ids[provider], 'consumer_id': consumer,
         'resource_class': rc, 'used': amount}
        for consumer, provider in placements
        for rc, amount in sorted(resources.items())])


def _check_fit(context, provider, count, resources):
    """NotBatchable unless ``count`` times ``resources`` fit the provider."""
    inventories = usage.read_inventories(context, provider.id)
    used, _held = usage.read_usages(context, provider.id)
    for rc, amount in sorted(resources.items()):
        # The others of the batch count as used: the last one must fit.
        reason = claims.misfit(rc, amount, inventories.get(rc),
                               used.get(rc, 0) + (count - 1) * amount)
        if reason:
            raise NotBatchable(
                str(exception.ClaimFailed(
                    amount=amount, resource_class=rc, uuid=provider.uuid,
                    consumer=f'{count} instances', reason=reason)))
