"""The transport: the media as SimPy resources, a device's steps, and one round's processes
and their vectorized timelines.

The access schemes (``media``: ``ResourceBlocks``, ``Tdma``, ``Unshared``, and the links of a
normalized system), the FIFO uplink and a receiver's blocks without the clock (``fifo``,
``block_queue``), the shared uplink, FDMA and proportional fair (``shared_uplink``); one device's steps on the clock, receive, compute, upload, the same for every orchestrator (``lifecycle``)
and the reference round of SimPy processes (``reference``, ``physical_round`` on a cell), each
with its vectorized fast path that gives the same events (``timeline``, ``physical_timeline``;
SimPy's order of same-time events: ``round_events``, ``event_order``); what a round is handed
(``durations``), how it holds the clock (``hold``) and the trace line it writes (``trace``).

May import: ``netsim.radio`` (a cell round reads its round's links and energy) and the
protocols at netsim's top; never ``netsim.clock`` (an orchestrator calls a round, a round never
calls back) or ``netsim.normalized`` (a round is handed its system's durations and links):
``tests/test_layers.py`` checks it.

Modules:

- ``block_queue``: A receiver's resource blocks shared by concurrent grants, without the clock: the
  fast path of ``netsim.transport.media.ResourceBlocks`` (the SimPy reference; TS 38.214 6.1.2.2,
  the grants held at once never more blocks than the band's).
- ``durations``: What a network system says one round's parts take: the one place durations come
  from.
- ``event_order``: The order in which SimPy processes events that fall at the same time, computed
  for a whole set of events at once.
- ``fifo``: The shared uplink as a FIFO queue with one server, vectorized (numpy).
- ``hold``: Holding the SimPy clock until an exact time: what every round process ends with.
- ``lifecycle``: One device's life on the clock, step by step: receive a stream, compute, upload,
  each a plain SimPy generator function that asks the channel what the step takes (``links``, a
  ``netsim.transport.media.Links``: the normalized systems' ``NormalizedLinks`` or a cell's
  ``netsim.radio.physical_links.PhysicalLinks``) and reads the device's state (``Presence``:
  availability and battery, issue 56 item 3) when the step happens. ``round_device`` composes them
  into a device's part of a synchronous round, the one device process of the normalized reference
  (``netsim.transport.reference``) and of the cell (``netsim.transport.physical_round``): receive
  its own streams (with a ``Presence``), wait for the model, compute, (barrier mode: wait for
  everyone), upload; ``send_stream`` is the one downlink step of them all (``send_streams``: a round's streams). The buffered orchestrators
  (``netsim.clock.buffered``, ``netsim.clock.tiered``) run the same steps for each dispatch, so a
  step is cut the same way under FedBuff, FedAsync and FedAT as in a round.
- ``media``: Long-lived transport on the clock: a link's access scheme as a SimPy resource, living
  for the whole run, each transfer an event, and the links that say what each transfer takes.
- ``physical_round``: A round on a physical network, one SimPy process per participant (the
  reference style of ``netsim.transport.reference``, with what a cell adds): streams at their
  weakest listener's rate, downlink and uplink outages, a TDMA uplink or a shared one (FDMA, PF:
  ``netsim.transport.shared_uplink``) per receiver (each sector of the site, or the site:
  ``PhysicalNetwork.uplink_queue``; one shared uplink for every receiver under
  ``ul_interference=clock``), and every device's energy on the trace. On TDMA each upload holds its grant's resource blocks (``RoundChannel.allocated_prbs``)
  of its receiver's band (``netsim.transport.media.ResourceBlocks``): grants that fit together send
  together.
- ``physical_timeline``: A round on a physical network with a TDMA uplink, vectorized: the fast path
  of ``netsim.transport.physical_round`` (whose per-device SimPy processes stay the reference).
- ``reference``: The reference round: one SimPy process per participant.
- ``round_events``: The SimPy events of one reference round (``netsim.transport.reference``), as an
  event graph: which event creates which, so that ``netsim.transport.event_order`` can tell in which
  order the processes resume when several things happen at the same time.
- ``shared_uplink``: A shared uplink in SimPy: each receiver's band split among the devices transmitting
  at each moment by an allocation policy (equal shares, ``fdma``; the proportional-fair scheduler's
  water-filling, ``pf``), each at its own rate and power on its share, one queue for every receiver
  under ``ul_interference=clock``.
- ``timeline``: One round's timeline, vectorized (numpy): the fast path of the round engine.
- ``trace``: One line of the per-event trace.
"""
