"""The channel in time: what a moving, fading, handing-over population looks like at any
simulated instant (TR 38.901 Sec. 7.6.3 spatial consistency, Table 7.8-1's UT mobility).

Each module is one idea, testable alone: ``doppler`` (time-correlated small-scale fading, a
sum of sinusoids per link), ``field`` (a spatially consistent Gaussian field for shadowing and
the LOS state), ``mobility`` (positions at any time), ``association`` (strongest sector and its
handovers), ``availability`` (devices on and off) and ``battery``. ``netsim.dynamics.motion`` puts
them together into the channel a ``PhysicalNetwork`` reads at ``env.now``.
"""
