"""The one error type the command line turns into a one-line message and exit status 2."""


class UsageError(Exception):
    """Bad input from the user: an unknown name, an impossible parameter, missing or corrupt data.

    The message is one line that names the problem (and, for data, the file and what to do).
    """


class DatasetError(UsageError):
    """A dataset file is missing, truncated or corrupt; the message names the file."""


class WriteError(UsageError):
    """The machine refused to write a result (disk full, permission, a name too long, a read-only
    file system); the message names the path and the reason."""
