"""Running flows: the only code that touches TaskFlow's internals.

``cellboot.workflows`` holds the flows and their tasks, written against
TaskFlow's public API (tasks, retries, patterns, states, failures).
Everything else TaskFlow offers — engines, persistence, storage, jobs,
conductors, listeners — is used here only, so that a TaskFlow upgrade
touches this package and nothing else:

* ``runner``: the one way a conductor runs a flow (start, run a saved
  flow, hand over);
* ``records``: what a saved flow's records say (uuid, meta, owner);
* ``kinds``: the registry of the kinds of flow, never a stored name;
  ``shared``: each kind's flow built and compiled once per process;
* ``engine`` and ``storage``: the engine every flow runs on, and what it
  writes, and when;
* ``backend``: TaskFlow's persistence backend per database URL, on our
  own SQLAlchemy engine; ``tables``: every SQL statement on TaskFlow's
  tables; ``schema``: creating and upgrading them in the flow and cell
  databases;
* ``jobboard``, ``claims``, ``conductor``, ``board_keys``: sharing flows
  between conductor processes through Redis;
* ``lookup`` and ``summaries``: finding and describing flows for
  operators; ``listeners``: logging and timing runs; ``flow_states``.

The private TaskFlow hooks used here are listed, and checked, by
``tests/unit/flowrun/test_taskflow_contract.py``.
"""
