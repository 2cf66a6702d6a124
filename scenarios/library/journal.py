"""Settings shared by the journal's scenarios (user-centric FL, V-A)."""

from learning.training import LocalTraining

# SGD, lr 0.01, momentum 0.9, E = 1, mini-batch 64 for the image tasks (V-A)
JOURNAL_TRAINING = LocalTraining(lr=0.01, momentum=0.9, batch_size=64, epochs=1)
VALIDATION_FRACTION = 0.25  # the paper does not state its validation split; pFedLIA's 3:1
ROUNDS = 100  # not stated in the paper; our default budget
