"""The one error type the command line turns into a one-line message and exit status 2
(defined beside ``contract.setting.Setting``, which raises it), and the dataset error."""

from contract.setting import UsageError

__all__ = ["DatasetError", "UsageError"]


class DatasetError(UsageError):
    """A dataset file is missing, truncated or corrupt; the message names the file."""


class WriteError(UsageError):
    """The machine refused to write a result (disk full, permission, a name too long, a read-only
    file system); the message names the path and the reason."""
