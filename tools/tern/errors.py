"""Errors the tern tool reports to its user as one line, never as a traceback."""


class TernError(Exception):
    """A problem the user can fix (bad input, missing tool or file).

    The CLI prints ``tern: error: <str(err)>`` and exits with ``status``.
    """

    status = 2


class ConfigError(TernError):
    """Something wrong in a system description.

    ``field`` names the offending key the way a reader finds it in the TOML
    (``partition[1].cpus``); ``file`` is filled in by whoever knows which file
    was being read, so that lower layers need not carry the path around.
    """

    def __init__(self, field, message, file=None):
        super().__init__(message)
        self.field = field
        self.message = message
        self.file = file

    def __str__(self):
        parts = [str(p) for p in (self.file, self.field) if p]
        parts.append(self.message)
        return ": ".join(parts)


class ToolError(TernError):
    """A host tool or input file the run depends on is missing or failed."""
