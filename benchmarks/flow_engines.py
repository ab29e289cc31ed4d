"""CPU time to get a compiled engine for a flow, as a conductor does per run.

Each iteration does what a conductor does before a run's first atom
that does not depend on the flow's data: the flow of a saved detail's
kind (``kinds.build``), cellboot's engine on it (unpersisted) and its
compilation. No database and no atom run: this measures what building
and compiling a flow costs, which ``cellboot.flowrun.shared`` pays once
per process. The last line printed is one JSON object: per kind, CPU
milliseconds per engine (``time.process_time``), the best of
``--repeat`` rounds of ``--count`` engines.

Runs against any tree that has ``kinds.build`` (to compare with an
earlier commit, put its tree first on the path):

  .venv/bin/python benchmarks/flow_engines.py --count 1000
  PYTHONPATH=TREE .venv/bin/python benchmarks/flow_engines.py --count 1000
"""

import argparse
import json
import time
import uuid

from taskflow.persistence import models
from taskflow.utils import persistence_utils

from cellboot.cli import arguments
from cellboot.flowrun import engine as flow_engine
from cellboot.flowrun import kinds


def _detail(kind):
    flow_detail = models.FlowDetail(kind, str(uuid.uuid4()))
    flow_detail.meta = {'kind': kind}
    return flow_detail


def engine_ms(kind, count):
    """CPU ms per compiled engine of ``kind``, over ``count`` of them."""
    level = kinds.KINDS[kind].level
    details = [_detail(kind) for _ in range(count)]
    start = time.process_time()
    for flow_detail in details:
        flow = kinds.build(flow_detail, level)
        engine = flow_engine.CellbootEngine(
            flow, persistence_utils.create_flow_detail(flow), None, {})
        engine.compile()
    return (time.process_time() - start) * 1000.0 / count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--count', type=arguments.positive_int, default=1000,
                        help='engines built and compiled per round, per '
                             'kind (default 1000)')
    parser.add_argument('--repeat', type=arguments.positive_int, default=5,
                        help='rounds; the best is reported (default 5)')
    args = parser.parse_args()
    figures = {}
    for kind in sorted(kinds.KINDS):
        # A first engine outside the rounds: what is built once per
        # process is not what is measured.
        engine_ms(kind, 1)
        rounds = [engine_ms(kind, args.count) for _ in range(args.repeat)]
        figures[kind] = {'cpu_ms_per_engine': round(min(rounds), 4),
                         'rounds': [round(r, 4) for r in rounds]}
        print(f'{kind}: {min(rounds):.4f} CPU ms per engine '
              f'(best of {args.repeat} x {args.count})')
    print(json.dumps({'count': args.count, 'repeat': args.repeat,
                      'kinds': figures}))


if __name__ == '__main__':
    main()
