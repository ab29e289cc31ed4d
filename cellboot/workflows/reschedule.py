"""The reschedule flow: one build, retried on its cell's alternates.

Run by a cell conductor when a compute host of its cell could not build
an instance and cast ``build_instances`` with the alternates it has not
tried. Persisted in the cell's own database: a cell conductor holds no
API-level credentials.
"""

from taskflow.patterns import linear_flow

from cellboot.workflows.tasks import alternates


def get_flow():
    """The reschedule flow.

    The retry controller ``alternates`` runs, once per alternate, at
    most ``max_attempts - num_attempts`` times:

    1. ``claim-alternate`` — claim the alternate through the scheduler
       and move the instance's host and node onto it; a claim that does
       not fit fails this try;
    2. ``cast-to-compute`` — cast ``build_and_run_instance`` to it, with
       the alternates after it.

    When every try failed (or none was allowed), the controller's revert
    puts the instance in ERROR with a fault starting ``Exceeded maximum
    number of retries`` that names the last failure, and the flow ends
    REVERTED.

    Store: ``instance`` (dict), ``request_spec``, ``host_list`` (the
    untried alternates, Selection dicts), ``build_retry`` ({num_attempts,
    hosts, last_failure}), ``max_attempts``; transient: ``context``,
    ``scheduler``, ``compute_rpcapi`` and ``cell_mapping`` (this cell).
    """
    return linear_flow.Flow(
        'reschedule', retry=alternates.Alternates('alternates')).add(
        alternates.ClaimAlternate('claim-alternate'),
        alternates.CastAlternate('cast-to-compute'),
    )
