"""Both scheduler levels of one benchmark process, and what they hold.

Shared by ``scheduler.py`` and ``placement_accuracy.py``: configure
cellboot for a benchmark fleet, start an ``InProcessSchedulers`` over
its cells (a ``CellScheduler`` per cell, the API level's
``CellsScheduler`` on top, as ``cellboot all-in-one`` composes them),
and measure the memory of each level.

Why the API level's memory is a walk and not an RSS probe: both levels
live in one process, and the cells' host states (tens of MB) and their
loading dwarf the API level's few kilobytes of aggregates in any RSS
figure. ``deep_size`` therefore follows ``gc.get_referents`` from the
``CellsScheduler`` and sums ``sys.getsizeof`` of every object reached
once, stopping at modules, classes, functions, threads and locks
(shared code, not data) and at the cell clients' schedulers (the cell
level, counted apart). ``traced_mb`` cross-checks it with tracemalloc
around building and starting the API level alone.
"""

import argparse
import collections
import gc
import resource
import sys
import threading
import tracemalloc
import types
import uuid as uuid_mod

# Objects whose memory is code or machinery, not the scheduler's data.
_NOT_DATA = (types.ModuleType, type, types.FunctionType,
             types.BuiltinFunctionType, types.MethodType, types.CodeType,
             threading.Thread, type(threading.Lock()),
             type(threading.RLock()), threading.Event,
             threading.Condition)


class Parser(argparse.ArgumentParser):
    """argparse, but a bad option is one line on stderr (exit 2): the
    message, not a usage block to read it out of."""

    def error(self, message):
        self.exit(2, f'{self.prog}: {message}\n')


def override(text):
    """An argparse type: ``GROUP.OPTION=VALUE``, as ``(group, option,
    value)``; the option is looked up, and the value checked, by
    ``apply_overrides``."""
    name, equals, value = text.partition('=')
    group, dot, option = name.rpartition('.')
    if not equals or not dot or not group or not option:
        raise argparse.ArgumentTypeError(
            f'must be GROUP.OPTION=VALUE, not {text!r}')
    return group, option, value


def apply_overrides(conf, overrides):
    """Set ``override`` triples; ValueError naming the first bad one."""
    from oslo_config import cfg

    for group, option, value in overrides:
        try:
            conf.set_override(option, value, group=group)
        except (cfg.NoSuchOptError, cfg.NoSuchGroupError, ValueError) as exc:
            raise ValueError(f'--conf {group}.{option}={value}: '
                             f'{str(exc).splitlines()[0]}') from None


def check_overrides(overrides):
    """``apply_overrides`` on a scratch configuration (for the parser)."""
    from oslo_config import cfg

    from cellboot import conf as cb_conf

    scratch = cfg.ConfigOpts()
    for module in cb_conf.MODULES:
        module.register_opts(scratch)
    scratch([], project='cellboot', default_config_files=[])
    apply_overrides(scratch, overrides)


def add_conf_argument(parser):
    """The ``--conf GROUP.OPTION=VALUE`` option both benchmarks take."""
    parser.add_argument('--conf', metavar='GROUP.OPTION=VALUE',
                        type=override, action='append',
                        default=[], help='a cellboot option for the run, '
                        'e.g. scheduler.cell_check_interval=0 (repeatable)')


def add_zone_arguments(parser):
    """``--zone-levels`` and ``--fan-out`` (see scheduler_fleet)."""
    from cellboot.cli import arguments

    parser.add_argument('--zone-levels', type=arguments.non_negative_int,
                        default=0, help='levels of zones above the cells '
                        '(default 0: no zones)')
    parser.add_argument('--fan-out', type=arguments.positive_int,
                        default=10, help='zones under a zone, and root '
                        'zones (default 10)')


def check_fleet_args(parser, args):
    """Refuse, as ``parser.error``, overrides cellboot would not take and
    more cells than hosts."""
    try:
        if args.conf:
            check_overrides(args.conf)
    except ValueError as exc:
        parser.error(str(exc))
    if args.cells > args.hosts:
        parser.error(f'--cells: must not exceed --hosts ({args.hosts}), '
                     f'not {args.cells}')
    levels = getattr(args, 'zone_levels', 0)
    leaves = args.fan_out ** levels if levels else 0
    if leaves > args.cells:
        parser.error(f'--fan-out: {args.fan_out} ** --zone-levels '
                     f'{args.zone_levels} = {leaves} leaf zones, more than '
                     f'the {args.cells} cells to put in them')


def configure(api_url, debug=False, overrides=()):
    """Point cellboot's global configuration at the benchmark fleet, then
    apply the ``overrides`` (``override`` triples)."""
    from cellboot.conf import CONF
    from oslo_log import log as logging

    logging.register_options(CONF)
    CONF([], project='cellboot', default_config_files=[])
    if not debug:
        # NoValidHost is logged at INFO: thousands of lines near a full
        # fleet would cost more than the decisions.
        CONF.set_override('default_log_levels',
                          ['cellboot=WARNING'] + CONF.default_log_levels)
    logging.setup(CONF, 'cellboot-benchmark')
    CONF.set_override('connection', api_url, group='api_database')
    # The fleet's heartbeats are written once, at build time.
    CONF.set_override('service_down_time', 10 ** 9, group='scheduler')
    CONF.set_override('max_retries', 0, group='database')
    apply_overrides(CONF, overrides)
    return CONF


def rss_mb():
    with open('/proc/self/statm') as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 2 ** 20


def peak_rss_mb():
    """This process's peak RSS since it began running this program.

    ``/proc/self/status`` VmHWM, not ``getrusage``'s ``ru_maxrss``: on
    Linux the latter keeps the peak of the process before its ``exec``
    (the test runner that started the benchmark, hundreds of MB).
    """
    try:
        with open('/proc/self/status') as status:
            for line in status:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def deep_size(root, skip=()):
    """Bytes of every object reachable from ``root`` (see the module
    docstring), each counted once; ``skip`` holds objects not to enter."""
    seen = {id(obj) for obj in skip}
    stack, total = [root], 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, _NOT_DATA):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total


def api_level_bytes(top):
    """``deep_size`` of a ``CellsScheduler``, its cell schedulers apart."""
    skip = [getattr(client, 'scheduler', None)
            for client in top._clients.values()]
    return deep_size(top, [obj for obj in skip if obj is not None])


def claims_memory(top):
    """``(map, bound)``: the API level's consumer -> cell map and how
    many it holds at most (``releases.Releases``)."""
    from cellboot.scheduler import releases
    return top.releases.claimed_in, releases.CLAIMS_REMEMBERED


def claims_bound_bytes(top):
    """What the API level's memory of claimed consumers costs when full.

    ``CellsScheduler`` remembers the cell of up to ``CLAIMS_REMEMBERED``
    consumers: a long-running scheduler reaches that bound, a 2,000
    request benchmark does not. Measured on a map of as many fresh uuid
    strings to one shared cell uuid, as the scheduler holds them.
    """
    cell = str(uuid_mod.uuid4())
    remembered = collections.OrderedDict(
        (str(uuid_mod.uuid4()), cell) for _ in range(claims_memory(top)[1]))
    return deep_size(remembered) - sys.getsizeof(cell)


def cell_mappings(ctx):
    from cellboot.objects import cell_mapping

    return [cell for cell in cell_mapping.CellMapping.get_all(ctx)
            if not cell.is_cell0]


def start(ctx, mappings, scheduler_prefix='bench'):
    """An ``InProcessSchedulers`` over ``mappings``, loaded; and figures.

    The cells' host states load once and are not reloaded (as in the
    flat benchmark: every claim passes through this process's cell
    schedulers, which follow them), but everything else runs as in a
    deployment: each cell scheduler publishes its aggregate in its
    cell's database every ``aggregate_publish_interval`` and the API
    level re-reads them every ``cell_check_interval``.
    ``scheduler_prefix`` names this process's schedulers among those of
    other processes (one aggregate row each).
    """
    import time

    from cellboot.scheduler import cells as cells_mod
    from cellboot.scheduler import in_process

    rss_before = rss_mb()
    started = time.perf_counter()
    tracemalloc.start()
    top = cells_mod.CellsScheduler()
    schedulers = in_process.InProcessSchedulers(top)
    tracemalloc.stop()
    for mapping in mappings:
        schedulers.add_cell(mapping, name=f'{scheduler_prefix}-'
                                          f'{mapping.name}')
    hosts = 0
    for scheduler in schedulers.cells.values():
        hosts += scheduler.start(ctx, refresh_interval=0)['hosts']
    cells_loaded_s = time.perf_counter() - started
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    summary = top.start(ctx)  # the periodic reads at their default
    traced = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    load_s = time.perf_counter() - started
    return schedulers, {
        'load_s': round(load_s, 3),
        'cells_load_s': round(cells_loaded_s, 3),
        'loaded_hosts': hosts, 'usable_cells': len(summary['usable']),
        'cell_cache_mb': round(cell_cache_bytes(schedulers) / 2 ** 20, 1),
        'api_level_traced_mb': round(traced / 2 ** 20, 3),
        'rss_before_mb': rss_before}


def cell_cache_bytes(schedulers):
    """The host states of every cell scheduler of the process."""
    total = 0
    for scheduler in schedulers.cells.values():
        with scheduler.cache.locked() as states:
            total += states.nbytes()
    return total


def failed_claims(schedulers):
    return sum(scheduler.manager.failed_claims
               for scheduler in schedulers.cells.values())


def sync_figures(schedulers):
    """The cell schedulers' change feed figures (``sync.Follower``):
    ``lags`` (seconds from a peer's write to this scheduler's pull),
    ``ages`` (seconds from the last pull's start to each decision: the
    staleness bound),
    pulls, the seconds they took, and feed errors."""
    lags, ages, pulls, seconds, errors = [], [], 0, 0.0, 0
    for scheduler in schedulers.cells.values():
        # None: the feed is off (or a cellboot from before it).
        follower = getattr(scheduler, 'sync', None)
        if follower is None:
            continue
        lags.extend(follower.lags)
        ages.extend(follower.view_ages)
        pulls += follower.pulls
        seconds += follower.pull_seconds
        errors += follower.errors
    return {'lags': lags, 'ages': ages, 'pulls': pulls,
            'pull_seconds': seconds,
            'errors': errors}


def reset_sync_figures(schedulers):
    """Forget the feed figures so far (the warm-up's), before timing."""
    for scheduler in schedulers.cells.values():
        follower = getattr(scheduler, 'sync', None)
        if follower is not None:
            follower.lags.clear()
            follower.view_ages.clear()
            follower.pulls = follower.errors = 0
            follower.pull_seconds = 0.0


def extra_cells(top):
    """Cells asked beyond the first: refusals and silences."""
    return top.stats['cells refused'] + top.stats['cells unreachable']


class CellCallTimer:
    """Seconds spent inside the cell clients' ``select`` (the cell
    level's filtering, weighing, claim and aggregate), so that a
    decision's time splits into the cell's and the API level's own.

    Why: in one process the 1,000 cell schedulers' work (and their
    per-engine SQL caches, cold when requests spread over many cells)
    hides what the API level itself costs per decision, which is what
    must scale with the number of cells and zones.
    """

    def __init__(self, top):
        import time

        self.seconds = 0.0
        for client in top._clients.values():
            client.select = self._timed(client.select, time.perf_counter)

    def _timed(self, select, clock):
        def timed(*args, **kwargs):
            started = clock()
            try:
                return select(*args, **kwargs)
            finally:
                self.seconds += clock() - started
        return timed


def cell_level_figures(schedulers, sample=3):
    """A cell scheduler's memory: its host states' arrays per 1,000
    hosts (every cell), and a ``deep_size`` walk of up to ``sample`` of
    the schedulers (the whole object: arrays, names, claims, engine),
    the median, also per 1,000 hosts. What must stay proportional to a
    cell's own hosts."""
    import statistics

    walked, hosts = [], 0
    for index, scheduler in enumerate(schedulers.cells.values()):
        with scheduler.cache.locked() as states:
            count = len(states.uuids)
        hosts += count
        if index < sample and count:
            walked.append(deep_size(scheduler) / count * 1000)
    per_1000 = cell_cache_bytes(schedulers) / max(hosts, 1) * 1000
    return {
        'cell_cache_mb_per_1000_hosts': round(per_1000 / 2 ** 20, 3),
        'cell_scheduler_mb_per_1000_hosts': round(
            statistics.median(walked) / 2 ** 20, 3) if walked else None}


def memory_figures(schedulers):
    """The JSON memory keys of a started ``InProcessSchedulers``."""
    top = schedulers.top
    api = api_level_bytes(top)
    claimed_in = claims_memory(top)[0]
    remembered = deep_size(claimed_in)
    return {
        'api_level_mb': round(api / 2 ** 20, 3),
        'api_level_at_claims_bound_mb': round(
            (api - remembered + claims_bound_bytes(top)) / 2 ** 20, 1),
        'remembered_claims': len(claimed_in),
        'cell_cache_mb': round(cell_cache_bytes(schedulers) / 2 ** 20, 1)}
