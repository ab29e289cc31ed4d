"""Generic resources of the scheduler benchmarks' fleet and requests.

``--extra-classes K --traits T`` (``benchmarks/scheduler.py``) gives
every host of the fleet K custom classes besides VCPU, MEMORY_MB and
DISK_GB (``CUSTOM_BENCH_C0`` ...) and half of T custom traits
(``CUSTOM_BENCH_T0`` ...: host i has trait j when i + j is even), and
makes every request draw one class (1 unit), require one trait and
forbid the next, so that half the hosts pass the traits and every
request pays for K + 3 resource rows and two trait rows.

Apart from ``scheduler_generic`` (which runs ``scheduler.py`` on the
plain and generic fleets): the fleet and the benchmark read it, and it
reads neither.
"""

CLASS_PREFIX = 'CUSTOM_BENCH_C'
TRAIT_PREFIX = 'CUSTOM_BENCH_T'


def host_extra(index, extra_classes, traits, total=64):
    """``({class: total}, [trait, ...])`` of host ``index``."""
    inventories = {f'{CLASS_PREFIX}{k}': total for k in range(extra_classes)}
    names = [f'{TRAIT_PREFIX}{j}' for j in range(traits)
             if (index + j) % 2 == 0]
    return inventories, names


def specs(flavor, extra_classes, traits):
    """The request specs a generic run cycles through (one when plain)."""
    count = max(extra_classes, traits, 1)
    found = []
    for r in range(count):
        extra = {}
        if extra_classes:
            extra[f'resources:{CLASS_PREFIX}{r % extra_classes}'] = '1'
        if traits:
            extra[f'trait:{TRAIT_PREFIX}{r % traits}'] = 'required'
        if traits > 1:
            extra[f'trait:{TRAIT_PREFIX}{(r + 1) % traits}'] = 'forbidden'
        found.append({'flavor': dict(flavor, extra_specs=extra),
                      'num_instances': 1, 'project_id': 'bench',
                      'user_id': 'bench'})
    return found


def add_arguments(parser, arguments):
    parser.add_argument('--extra-classes', type=arguments.non_negative_int,
                        default=0,
                        help='custom resource classes every host has '
                             'besides VCPU, MEMORY_MB and DISK_GB; each '
                             'request draws one (default 0)')
    parser.add_argument('--traits', type=arguments.non_negative_int,
                        default=0,
                        help='custom traits, each on half the hosts; each '
                             'request requires one and forbids another '
                             '(default 0)')
