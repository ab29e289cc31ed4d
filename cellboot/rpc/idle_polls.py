"""Fewer idle wake-ups of the rabbit driver's listening threads.

Each process that serves a topic or makes calls has two threads reading
RabbitMQ: its RPC server's listener and its reply waiter. Both wait for
the next message in ``drain_events`` with a timeout that starts at 1 ms
after every message and doubles up to 5 s at each timeout
(``ACK_REQUEUE_EVERY_SECONDS_MIN`` and ``_MAX`` in oslo.messaging's
``amqpdriver``). A message arriving wakes the thread at once whatever
the timeout: the timeout only bounds how long a thread sleeps with
nothing to read, so that the listener can send the acknowledgements
its worker threads queued meanwhile.

Starting at 1 ms costs about log2(gap / 1 ms) empty wake-ups per
message, each a trip through kombu, the socket and a timer: the fewer
messages a process gets, the more each one costs. That is why a boot
cost the super conductors more with three of them than with one (each
gets a third of the casts and replies, each wakes as often as one
alone): on the deployment-cost benchmark at 15 boots/s with 3 super
conductors, these two threads took 5.4 ms of CPU per boot, against
2.7-2.9 ms with a first timeout of 50 ms (docs/benchmarks.md, "The cost
per boot no longer rises with N").

What a later first wake-up delays: only an acknowledgement queued by a
worker thread when no further message comes, by ``FIRST_IDLE_WAIT``
at most. cellboot's servers acknowledge a cast before handling it
(oslo.messaging's RPC server does), and a cast delivered twice does
nothing the second time (a conductor finds its flow exists already, a
compute host finds the build taken: docs/reliability.md, "a duplicated
message"), so the window in which a dying process leaves a cast to be
delivered again grows by 50 ms and costs nothing else. Replies are
acknowledged by the reply waiter itself as they arrive; stopping a
server is bounded by the 5 s ceiling, as before.

oslo.messaging offers no option for it: the constant is set on its
module, which its poll loops read at each wait; the contract test
(``tests/unit/test_rpc_idle_polls.py``) checks that they still do.
"""

from oslo_messaging._drivers import amqpdriver

# Seconds a listening thread first waits after a message (was 0.001).
FIRST_IDLE_WAIT = 0.05


def space_out():
    """Make the rabbit driver's threads first wait ``FIRST_IDLE_WAIT``."""
    amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN = FIRST_IDLE_WAIT
