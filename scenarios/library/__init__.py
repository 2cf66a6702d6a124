"""The scenario families; each module registers its scenarios in ``scenarios.definitions.registry``."""
