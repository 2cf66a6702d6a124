"""Execution: a run resolved, built and run once (``runner``); many runs (``compare``, ``sweep``,
``lambda_study``, ``reproduce``) on one worker pool (``pool``); progress on stderr."""
