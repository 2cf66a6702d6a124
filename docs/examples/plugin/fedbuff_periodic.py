"""FedBuff with a period: a semi-asynchronous orchestrator in one file. The server aggregates its
buffer at the K-th arrival (FedBuff, Nguyen et al. 2022, Algorithm 1) or PERIOD after the last
aggregation, whichever comes first (a timer on FedBuff's buffer, not one paper's algorithm): a
buffer still empty then is looked at again PERIOD later. The period is this file's constant."""

from netsim.clock.buffered import BufferedRun
from scenarios.definitions.orchestrators import FedBuff

PERIOD = 3.5  # T, in the clock's unit (T_dl on a normalized system, seconds on a cell)


class PeriodicRun(BufferedRun):
    """FedBuff's lifecycle (``BufferedRun``); only when to aggregate differs."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.env.process(self.period(0))

    def period(self, version):
        """T after ``version`` was made, unless a K-th arrival made the next one first."""
        yield self.env.timeout(PERIOD)
        if self.version != version or self.finished.triggered or self.recorder.stopped:
            return
        if not self.buffer:
            self.env.process(self.period(version))
            return
        self.aggregate()
        self.dispatch_idle()
        self.keep_going()

    def aggregate(self):
        super().aggregate()
        self.env.process(self.period(self.version))


class FedBuffPeriodic(FedBuff):
    name = "fedbuff-periodic"
    doc = f"fedbuff, or aggregate {PERIOD:g} after the last aggregation, whichever comes first"
    run_class = PeriodicRun  # FedBuff's settings (it reads what fedbuff reads), learner and run


ORCHESTRATORS = [FedBuffPeriodic()]
