"""Which hosts can take one instance of a request, and why the others not.

Order of work, cheapest first:

1. cells: every filter's ``cell_mask`` prunes whole cells, so their
   hosts are never examined (a cell's scheduler has one cell: the API
   level prunes cells from their aggregates, ``cell_filters``);
2. the request's own exclusions: ``ignore_hosts``;
3. every enabled filter's ``host_mask``, in the configured order;
4. hosts whose claim already failed for this instance.

Each step records how many hosts it removed. When none is left, the
``Elimination`` names the step that removed the last ones and what the
request asked of it: the line an operator reads to debug NoValidHost.
"""

import numpy as np

IGNORE_HOSTS = 'ignore_hosts'
FAILED_CLAIMS = 'claim retries'


class Elimination:
    """How the candidates dwindled, step by step.

    The candidates are a cell's hosts, or, at the API level, the cells
    (``unit`` 'cell').
    """

    def __init__(self, hosts, cells, unit='host'):
        self.hosts = hosts
        self.cells = cells
        self.unit = unit
        self.steps = []  # (name, removed, detail)

    def removed(self, name, count, detail=''):
        if count:
            self.steps.append((name, int(count), detail))

    def last_step(self):
        """The name of the step that removed the last candidates (a
        filter, ``ignore_hosts``, ``claim retries``), or ``'none'`` when
        there were none to remove: a label for the metrics, where
        ``reason()`` is the sentence for people."""
        return self.steps[-1][0] if self.hosts and self.steps else 'none'

    def reason(self):
        """Why no candidate is left, naming the step that removed the
        last ones."""
        self.steps = [(name, count, detail() if callable(detail) else detail)
                      for name, count, detail in self.steps]
        if not self.hosts:
            if self.unit == 'cell':
                return ('The API level knows no cell to schedule to: no '
                        'enabled cell is mapped but cell0.')
            return ('The scheduler knows no compute host: the cell has no '
                    'host with a resource provider.')
        name, count, detail = self.steps[-1]
        last = f'{name} removed the last {count} {self.unit}(s)'
        if detail:
            last += f' ({detail})'
        trail = ', '.join(f'{n} removed {c}' for n, c, _ in self.steps)
        where = (f'Of {self.hosts} cell(s)' if self.unit == 'cell' else
                 f'Of {self.hosts} host(s) in {self.cells} cell(s)')
        return f'{last}. {where}: {trail}.'


def find(states, request, filters):
    """``(mask, elimination)``: the hosts that pass, and the record."""
    live = states.live
    elimination = Elimination(int(np.count_nonzero(live)),
                              int(np.count_nonzero(states.cell_hosts)))
    cells_ok = np.ones(len(states.cells.names), dtype=bool)
    for f in filters:
        pruned = f.cell_mask(states, request)
        if pruned is None:
            continue
        dropped = cells_ok & ~pruned
        if dropped.any():
            elimination.removed(
                f'{f.name} (cell pruning)', states.cell_hosts[dropped].sum(),
                _cell_describer(f, states, request, dropped))
            cells_ok = cells_ok & pruned
    mask = live.copy() if cells_ok.all() else live & cells_ok[states.cell]
    remaining = int(np.count_nonzero(mask))
    steps = [(IGNORE_HOSTS, _excluded_hosts(states, request),
              'hosts the request said to ignore')]
    steps += [(f.name, f, None) for f in filters]
    steps.append((FAILED_CLAIMS, _failed_claims(states, request),
                  'their claims failed: other schedulers took the room'))
    for name, step, detail in steps:
        if not remaining:
            break
        if detail is None:  # a filter: describe it only if it removes
            step_mask = step.host_mask(states, request)
            detail = _describer(step, states, request, mask)
        else:
            step_mask = step
        if step_mask is None:
            continue
        # A new mask, not in place: the describer keeps the one the
        # step was given.
        mask = mask & step_mask
        left = int(np.count_nonzero(mask))
        elimination.removed(name, remaining - left, detail)
        remaining = left
    return mask, elimination


def _describer(f, states, request, candidates):
    return lambda: f.explain(states, request, candidates)


def _cell_describer(f, states, request, dropped):
    def detail():
        candidates = states.live & dropped[states.cell]
        return (f'{f.explain(states, request, candidates)}; '
                f'{int(dropped.sum())} cell(s) pruned')
    return detail


def _excluded_hosts(states, request):
    if not request.ignore_hosts:
        return None
    return ~states.mask_of(
        states.positions_of_service_hosts(request.ignore_hosts))


def _failed_claims(states, request):
    if not request.failed_providers:
        return None
    return ~states.mask_of(states.positions(request.failed_providers))
