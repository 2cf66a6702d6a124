"""A Ray task for tests/test_sweep.py in a module of its own: a Ray worker imports the module of
the function it runs, and this one imports nothing but Ray (the test module imports torch and
the project, seconds in every worker)."""


def assigned_resources() -> dict:
    import ray

    return dict(ray.get_runtime_context().get_assigned_resources())
