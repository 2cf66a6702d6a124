"""What a run leaves: the result folder's format and reader, atomic writing, provenance, the one
reader of every file handed in, and the training-health guard."""
