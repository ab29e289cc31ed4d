"""Many casts at once: keep several broker confirms in flight.

oslo.messaging's RabbitMQ driver publishes with confirms: a cast returns
only once the broker has acknowledged the message, one round trip to
the broker each. A multi-create that casts its builds one after the
other waits for every round trip in turn: on the cost benchmark's
deployment 600 casts took 4.5 s (7.5 ms each, nearly all of it waiting
for the broker, which shares the machine with the compute hosts busy
building the first instances), longer than scheduling, creating and
mapping all 600 together.

``send_each`` sends from a few threads at once instead: each publishes
on a connection of its own from the transport's pool (``[DEFAULT]
rpc_conn_pool_size``, 30), so up to ``WIDTH`` round trips overlap. A
single cast (one-instance boots, the common case) is sent in the
caller's thread, as before.

The pool's threads are joined when the step ends; a cast to a broker
that does not answer gives up after its bounded reconnects
(``cellboot.rpc.client``), so a step never waits on one for ever.
"""

from concurrent import futures

# Casts in flight at once. A few round trips overlapping are what pays;
# more would only take more of the transport pool's connections from
# the other flows that cast at the same time.
WIDTH = 8

# What a cast not sent after a failed check gives (never returned).
_NOT_SENT = object()


def send_each(context, send, items, before_each=None, width=None):
    """``{item: None, or what send(item) raised}``, ``width`` at a time.

    ``width`` None: ``WIDTH``.

    ``send(item)`` runs in a pool thread, with ``context`` as that
    thread's current request context (its log lines carry the request
    id). ``before_each()``, if given, runs right before each send, in the
    same thread: what it raises stops the sending, and is raised here
    once the casts in flight have returned. A flow's atom checks there
    that its run still owns the flow; a takeover meanwhile lets at most
    the casts already in flight through, as a takeover right after a
    check would.
    """
    items = list(items)
    stopped = []

    def one(item):
        if stopped:
            return _NOT_SENT
        try:
            if before_each is not None:
                before_each()
        except Exception as exc:
            stopped.append(exc)
            return _NOT_SENT
        try:
            send(item)
        except Exception as exc:
            return exc
        return None

    def in_thread(item):
        context.update_store()
        return one(item)

    if len(items) <= 1:
        outcomes = [one(item) for item in items]
    else:
        workers = min(width or WIDTH, len(items))
        with futures.ThreadPoolExecutor(max_workers=workers,
                                        thread_name_prefix='cast') as pool:
            outcomes = list(pool.map(in_thread, items))
    if stopped:
        raise stopped[0]
    return dict(zip(items, outcomes))
