"""What a cellboot process counts, as Prometheus metrics.

The metrics live in this process's memory, in prometheus_client's
default registry, and are read by a scrape: ``cellboot-api``'s
``/metrics`` (administrators only, ``cellboot.api.operator_paths``) or
the small server every service can start on ``[metrics] port``
(``exposition``). Each process counts what it did; Prometheus adds the
processes up (docs/operations.md names every metric and what to alert
on).

Two kinds of figure:

* events counted where they happen, with the objects below: a boot
  accepted or ended, an atom's duration, a flow resumed or handed over,
  a cast that could not be sent;
* figures that other objects keep already for their own reports (the
  schedulers' ``counters()``, the flows a runner has in hand, the cells
  the API level cannot reach): read when scraped, never counted twice
  (``sources``).

Why prometheus_client and not oslo.metrics: oslo.metrics is a separate
daemon that collects oslo.messaging's RPC figures from the services over
a UNIX socket and exports them; it offers no way for a service to define
metrics of its own. prometheus_client is what it exports with, so both
can run side by side.
"""

import prometheus_client

from cellboot.metrics import sources  # noqa: F401 (its collector)

# Atom durations: from a few milliseconds (a mapping written) to a
# minute (a schedule waiting for a cell's scheduler, a database outage
# ridden out).
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                    5.0, 10.0, 30.0, 60.0, float('inf'))

# How a boot ended (``boot_ended``).
ACTIVE = 'active'
ERROR = 'error'

BOOTS_STARTED = prometheus_client.Counter(
    'cellboot_boots_started',
    'Instances whose boot the API accepted (one per instance of a '
    'multi-create).')
BOOTS_ENDED = prometheus_client.Counter(
    'cellboot_boots_ended',
    'Instances whose build ended, by result: active (the compute host '
    'made it ACTIVE) or error (ERROR with a fault, in its cell or cell0).',
    ['result'])
ATOM_DURATION = prometheus_client.Histogram(
    'cellboot_flow_atom_duration_seconds',
    'Seconds each run (or revert) of a flow\'s atom took, by flow kind, '
    'atom and the state it ended in.',
    ['kind', 'atom', 'state'], buckets=DURATION_BUCKETS)
FLOWS_ENDED = prometheus_client.Counter(
    'cellboot_flows_ended',
    'Runs of flows that stopped, by flow kind and the state they stopped '
    'in (success, reverted, failure, suspended).',
    ['kind', 'state'])
FLOWS_RESUMED = prometheus_client.Counter(
    'cellboot_flows_resumed',
    'Flows this process took over from a conductor that left them '
    'unfinished, by kind.',
    ['kind'])
FLOWS_HANDED_OVER = prometheus_client.Counter(
    'cellboot_flows_handed_over',
    'Unfinished flows nobody ran that a sweep handed over (posted again, '
    'or resumed in a thread), by kind.',
    ['kind'])
CAST_FAILURES = prometheus_client.Counter(
    'cellboot_rpc_cast_failures',
    'RPC casts that could not be sent (the broker did not take them), by '
    'method. The rows stay; a sweep sends the work again.',
    ['method'])


def boots_started(count):
    BOOTS_STARTED.inc(count)


def boot_ended(result):
    BOOTS_ENDED.labels(result=result).inc()
