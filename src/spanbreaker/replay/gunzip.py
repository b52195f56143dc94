"""The gzip reader replay opens recorded files with: ISA-L's where its wheel is installed, else the standard library's.

Why: inflating is a fixed share of every replay (the 500-run SWE-bench file is 76 MB of JSON in 12 MB of gzip:
0.20 s of CPU with ``zlib``, 0.08 s with ISA-L's inflate, the same file object and format). With ``--jobs N`` on one
file every worker inflates the whole file, so the saving counts once per worker. python-isal (``isal``) is a
dependency on the platforms it ships wheels for; elsewhere the standard library's reader is used, unchanged.
"""

from __future__ import annotations

import gzip
import io
import zlib
from typing import Any

_GzipFile: Any = gzip.GzipFile
INFLATE_ERRORS: tuple[type[Exception], ...] = (zlib.error,)
"""What a corrupt deflate stream raises, besides ``EOFError`` (cut short) and ``gzip.BadGzipFile`` (an ``OSError``)."""
try:
    from isal import igzip, isal_zlib
except ImportError:  # no wheel for this platform: the standard library's reader
    pass
else:
    _GzipFile = igzip.IGzipFile  # a subclass of gzip.GzipFile: the same reads, seek and errors but for inflate's
    INFLATE_ERRORS = (zlib.error, isal_zlib.error)  # type: ignore[assignment]  # the stub types it as an instance

READ_ERRORS: tuple[type[Exception], ...] = (EOFError, OSError, *INFLATE_ERRORS)
"""Everything reading a gzip (or plain) file may raise on a damaged or unreadable file."""

ACCELERATED = _GzipFile is not gzip.GzipFile
"""Whether ISA-L's reader is the one in use."""


def open_gzip(raw: io.BufferedIOBase) -> gzip.GzipFile:
    """A gzip file object reading from ``raw`` (a ``gzip.GzipFile``, or ISA-L's subclass of it)."""
    opened: gzip.GzipFile = _GzipFile(fileobj=raw)
    return opened
