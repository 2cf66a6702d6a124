"""Wiring: datasets, partitions, network presets, named scenarios, the runner, results, the CLI."""
