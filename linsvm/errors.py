"""Exceptions of linsvm.

Every error a user can cause (bad data, bad model file, bad parameter) is a
subclass of LinsvmError, so the command line can print it as one line and exit
non-zero without a traceback.  They also subclass ValueError, which is what a
Python caller expects from bad input.
"""


class LinsvmError(ValueError):
    """Base class of all user-facing linsvm errors."""


class DataError(LinsvmError):
    """Malformed or unusable data; the message names the file and line."""


class ModelError(LinsvmError):
    """A model file that is truncated, corrupt, foreign, or inconsistent."""


class ParameterError(LinsvmError):
    """An option or parameter out of its valid range."""
