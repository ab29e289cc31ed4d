"""Generic resources in the scheduler benchmark, against the plain fleet.

The fleet's extra classes and traits are ``generic_fleet``'s.

``python benchmarks/scheduler_generic.py --hosts N --cells C
--extra-classes K --traits T`` runs the benchmark twice, each in a
process of its own on a fleet of its own: the three-class fleet with
the plain flavor, then the generic one, then, with ``--pools-per-zone
N``, the three-class fleet whose disk is in N shared pools per zone
(``scheduler_pools``); it prints each JSON result and a last line with
the ratios of their decisions per second to the plain run's::

  {"plain_decisions_per_s": ..., "generic_decisions_per_s": ...,
   "ratio": generic / plain, "classes": 3 + K, "traits": T,
   "pools_decisions_per_s": ..., "pools_ratio": pools / plain}
"""

import concurrent.futures
import json
import multiprocessing
import sys


def _run(argv):
    import scheduler
    return scheduler.run(scheduler._parse_args(argv))


def _in_child(argv):
    context = multiprocessing.get_context('spawn')
    with concurrent.futures.ProcessPoolExecutor(
            1, mp_context=context) as pool:
        return pool.submit(_run, argv).result()


def main(argv=None):
    import scheduler
    argv = list(sys.argv[1:] if argv is None else argv)
    args = scheduler._parse_args(argv)
    plain_argv = argv + ['--extra-classes', '0', '--traits', '0',
                         '--pools-per-zone', '0']
    plain = _in_child(plain_argv)
    print(json.dumps(dict(variant='plain', **plain)), flush=True)
    generic = _in_child(argv + ['--pools-per-zone', '0'])
    print(json.dumps(dict(variant='generic', **generic)), flush=True)
    pools = {}
    if args.pools_per_zone:
        found = _in_child(argv + ['--extra-classes', '0', '--traits', '0'])
        print(json.dumps(dict(variant='pools', **found)), flush=True)
        pools = {'pools_per_zone': args.pools_per_zone,
                 'pools_decisions_per_s': found['decisions_per_s'],
                 'pools_ratio': round(found['decisions_per_s']
                                      / plain['decisions_per_s'], 3),
                 'pools_p50_ms': found['p50_ms'],
                 'pools_placed': found['placed']}
    print(json.dumps({
        'hosts': args.hosts, 'classes': 3 + args.extra_classes,
        'traits': args.traits,
        'plain_decisions_per_s': plain['decisions_per_s'],
        'generic_decisions_per_s': generic['decisions_per_s'],
        'ratio': round(generic['decisions_per_s']
                       / plain['decisions_per_s'], 3),
        'plain_p50_ms': plain['p50_ms'], 'generic_p50_ms': generic['p50_ms'],
        'plain_cache_mb': plain.get('cache_mb'),
        'generic_cache_mb': generic.get('cache_mb'), **pools}))


if __name__ == '__main__':
    main()
