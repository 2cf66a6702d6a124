import torch

torch.set_num_threads(1)  # many tiny local updates: one thread is fastest and deterministic
