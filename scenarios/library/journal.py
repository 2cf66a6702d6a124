"""Settings shared by the journal's scenarios (user-centric FL, V-A), matched to the authors'
reference code where the paper's text is silent or differs.

Training: the text says SGD (lr 0.01, momentum 0.9, E = 1, batch 64); the reference code that
produced the published tables trains every run with Adam (lr 0.01, each device's optimizer
state kept across rounds) from Keras's initialization. The journal scenarios default to the
reference code's choice, so that their numbers are comparable with the paper's tables; the
text's SGD is ``--optimizer sgd``. Except CIFAR-10 concept shift, which trains with the text's
SGD: there the reference code's Adam collapses (docs/faithfulness.md has the measurements).
"""

from learning.training import LocalTraining

JOURNAL_TRAINING = LocalTraining(lr=0.01, momentum=0.9, batch_size=64, epochs=1, optimizer="adam", init="keras")
JOURNAL_TEXT_TRAINING = LocalTraining(lr=0.01, momentum=0.9, batch_size=64, epochs=1, optimizer="sgd", init="keras")
VALIDATION_FRACTION = 0.2  # the paper does not state it; the reference code splits 80/20
ROUNDS = 100  # not stated in the paper; our default budget
