"""The clock's drivers: what moves the SimPy clock for a whole run and drives the learner.

An orchestrator decides when to dispatch to whom and when to aggregate: the synchronous round
loop (``engine``: barrier, pipelined, deadline, participation, schedulers), buffered
asynchronous aggregation (``buffered``: FedBuff, FedAsync) and FedAT's latency tiers
(``tiered``), each keeping its records through the one recorder (``recorder``), with a run's horizon (``budget``). A newcomer asking "who starts a round, who
aggregates" starts here.

May import: ``netsim.transport``, ``netsim.radio``, ``netsim.normalized``, ``netsim.dynamics``
and the protocols at netsim's top (``netsim.kind``, ``netsim.scheduling``). Nothing else in
netsim imports this room (only ``netsim/__init__.py``, the package's front door):
``tests/test_layers.py`` checks it. The hold helper and the trace line live in
``netsim.transport``, because the round processes there end with them.

Modules:

- ``budget``: A run's horizon: it stops when it has spent a budget of simulated time, downlink or
  uplink bits or device energy, whichever comes first, under any orchestrator (synchronous rounds,
  ``netsim.clock.engine``; buffered aggregation, ``netsim.clock.buffered``).
- ``buffered``: Buffered asynchronous aggregation on the clock: FedBuff (Nguyen et al. 2022,
  Algorithm 1: the server aggregates every K updates that arrive) and FedAsync (Xie et al. 2019: K =
  1), the orchestrator beside the synchronous round loop of ``netsim.clock.engine``.
- ``engine``: The round process and the one round loop of the project.
- ``recorder``: The one recorder of a run, whatever orchestrator drives it (the synchronous round
  loop of ``netsim.clock.engine``, buffered aggregation of ``netsim.clock.buffered``, FedAT's tiers
  of ``netsim.clock.tiered``, a plugin's): it keeps the records (one per round or aggregation, the
  set-up round or the initial model's evaluation first), hands each to the run's ``on_round`` as it
  is kept, decides which are evaluated (after 0, every ``evaluate_every`` and the last: the
  orchestrators only ask), spends the run's budget (``netsim.clock.budget``) and fires ``stop`` when
  a bits or energy budget is reached; ``run`` then runs the clock until the orchestrator's end, that
  stop or the time budget, whichever comes first.
- ``tiered``: Semi-asynchronous tiered aggregation on the clock: FedAT (Chai et al. 2021, "FedAT: a
  high-performance and communication-efficient federated learning system with asynchronous tiers",
  SC '21), an orchestrator built on the lifecycle of ``netsim.clock.buffered`` (its transport, its
  device processes, its reading of the device's state and channel at each step, its records and
  drops): only when to dispatch and when to aggregate differ.
"""
