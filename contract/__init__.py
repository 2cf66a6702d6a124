"""The learner-clock contract: what a learner asks of the network each round and what the
network tells it back (``RoundPlan``, ``Stream``, ``RoundOutcome``), and the ``Learner``
protocol the clock drives; the same in messages for asynchronous aggregation (``Dispatch``,
``Update``, ``BufferedLearner``), and the plain pieces every layer may use: a typed value with its
bounds (``Setting``) and the user's-error type (``UsageError``), in ``contract.setting``, and the
bounded reading of a file a user hands in (``contract.files``).

Both sides import it: ``learning`` (PyTorch, never SimPy) and ``netsim`` (SimPy, never
PyTorch). It is standard library only: it loads neither SimPy, PyTorch nor NumPy. The one split
of a run seed into its named random streams, ``contract.seeds``, is NumPy's ``SeedSequence``
and loads only where it is imported.
"""

from contract.learner import Learner
from contract.messages import BufferedLearner, Dispatch, Update
from contract.plan import RoundOutcome, RoundPlan, Stream

__all__ = ["BufferedLearner", "Dispatch", "Learner", "RoundOutcome", "RoundPlan", "Stream", "Update"]
