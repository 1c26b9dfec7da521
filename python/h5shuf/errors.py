# SPDX-License-Identifier: BSD-3-Clause
"""errors.py - h5shuf.Error and one subclass per status code of include/h5shuf.h.

A failed call raises the subclass of its status with the library's one-line message ("FILE:/dataset:
cause"), the text the command-line tool prints after "h5shuf: ".  Every class carries the status as
`status` (the number) and `status_name` (H5SHUF_...).  Some also derive from the builtin exception a
Python user would catch: NotFoundError is a FileNotFoundError, OutputExistsError a FileExistsError,
InvalidArgumentError a ValueError.
"""


class Error(Exception):
    """An h5shuf failure: str(err) is the library's one-line message."""
    status = None
    status_name = None


class InvalidArgumentError(Error, ValueError):
    """A malformed spec or option value (the tool's usage errors)."""
    status, status_name = 1, "H5SHUF_EINVAL"


class OutOfMemoryError(Error):
    """An allocation failed."""
    status, status_name = 2, "H5SHUF_ENOMEM"


class NotFoundError(Error, FileNotFoundError):
    """An input file, dataset or pile file does not exist."""
    status, status_name = 3, "H5SHUF_ENOENT"


class NotHDF5Error(Error):
    """A file is not an HDF5 file."""
    status, status_name = 4, "H5SHUF_ENOTHDF5"


class UnsupportedError(Error):
    """A dataset h5shuf cannot shuffle, a reference or lossy filter refused, a foreign pile file."""
    status, status_name = 5, "H5SHUF_EUNSUPPORTED"


class MismatchError(Error):
    """Inputs that do not go together, inputs changed since a scatter, a verify that failed."""
    status, status_name = 6, "H5SHUF_EMISMATCH"


class OutputExistsError(Error, FileExistsError):
    """The output exists (force=True replaces it)."""
    status, status_name = 7, "H5SHUF_EEXIST"


class AmbiguousError(Error):
    """A whole file whose rows cannot be told (several candidate sets: the message names each)."""
    status, status_name = 8, "H5SHUF_EAMBIGUOUS"


class BudgetError(Error):
    """The memory budget is too small; the message says how much is needed."""
    status, status_name = 9, "H5SHUF_EBUDGET"


class IOFailureError(Error):
    """A read, write, sync or rename failed."""
    status, status_name = 10, "H5SHUF_EIO"


class HDF5Error(Error):
    """The HDF5 library failed; the message holds its innermost error."""
    status, status_name = 11, "H5SHUF_EHDF5"


class CanceledError(Error):
    """The run was cancelled (the package raises KeyboardInterrupt instead when it cancelled)."""
    status, status_name = 12, "H5SHUF_ECANCELED"


class SameFileError(Error):
    """The output is one of the inputs."""
    status, status_name = 13, "H5SHUF_ESAMEFILE"


class InternalError(Error):
    """A bug of h5shuf."""
    status, status_name = 14, "H5SHUF_EINTERNAL"


class NoSpaceError(Error):
    """Not enough disk space for the scratch file or the output: checked before writing, or a write found a
    disk full ("no space left on DIR: N MiB more needed"; a checkpointing run keeps its state)."""
    status, status_name = 15, "H5SHUF_ENOSPC"


BY_STATUS = {cls.status: cls for cls in Error.__subclasses__()}


def from_status(status, message):
    """The exception for a status code (an unknown code gives a plain Error).  The library's messages name
    the tool's options; the one a Python caller meets first, "use --force", names the keyword instead."""
    cls = BY_STATUS.get(status)
    if cls is OutputExistsError:
        message = message.replace("use --force", "pass force=True")
    if cls is None:
        err = Error(message)
        err.status = status
        return err
    return cls(message)
