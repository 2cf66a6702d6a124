"""One module per ``fl-cosim`` subcommand: ``add_parser(subparsers)`` and ``execute(args)``.

``execute`` returns ``(data, text)``: ``data`` is printed as JSON with ``--json``, ``text``
otherwise. Progress goes to stderr, so stdout stays machine-readable.
"""
