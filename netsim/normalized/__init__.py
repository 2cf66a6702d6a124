"""The normalized systems: the journal paper's V-D model (time in units of ``T_dl``, no
channel, no energy).

The system (``system``: ``NetworkSystem``), its compute-time distributions (``distributions``,
with their theoretical moments), the closed-form round time (``round_time``) and a system whose
compute times are a fixed script (``scripted``, for hand-written traces and the docs' timelines).

May import: ``netsim.transport`` and the protocols at netsim's top; never ``netsim.clock``,
``netsim.radio`` or ``netsim.dynamics``: ``tests/test_layers.py`` checks it.

Modules:

- ``distributions``: Compute-time distributions that know their theoretical moments (Ciw style), so
  the simulation can be tested against theory.
- ``round_time``: Closed-form round time of the paper's system model (journal V-D).
- ``scripted``: A normalized system whose compute times are a fixed script: event traces written by
  hand (the asynchronous orchestrator's tests) and the timelines drawn in docs/network-model.md
  (``benchmarks/timelines.py``) run on it, so both show the same trace.
- ``system``: The network system: link speeds, device compute model, timing mode, deadline.
"""
