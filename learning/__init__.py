"""PyTorch learning engine: models, local training, aggregation maths, algorithms.

Knows nothing of time or SimPy: tensors in, tensors out.
"""
