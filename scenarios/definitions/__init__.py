"""What to simulate: named scenarios and their registry, data partitions, network systems and
physical cells, communication levers, a run's typed settings and its seed streams."""
