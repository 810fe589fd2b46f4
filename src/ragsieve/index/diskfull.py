"""A full disk during an index write is one line (exit 3), not a Lance traceback.

Lance and Arrow report ENOSPC as their own error types (``LanceError(IO): ... No space left on
device``), so it is recognised by ``errno`` or by that text anywhere in the exception's chain.
Nothing is lost when it happens: a write commits only by replacing the manifest, so the index
keeps answering from its previous committed version.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator

from ragsieve.errors import IndexStoreError, RagsieveError

_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
_NO_SPACE_TEXT = ("no space left on device", "disk quota exceeded")


def is_no_space(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says the disk or quota is full."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in _NO_SPACE:
            return True
        if any(t in str(e).lower() for t in _NO_SPACE_TEXT):
            return True
        e = e.__cause__ or e.__context__
    return False


def no_space_message(where: object | None) -> str:
    """The one-line error for a full disk while writing the index at ``where``."""
    if where is None:
        return (
            "no space left on the device; nothing was committed (an index already there is as "
            "it was): free some space and run the command again"
        )
    return (
        f"no space left on the device holding index {where}; nothing was committed (the index "
        "is as it was and still answers): free some space and run the command again"
    )


@contextlib.contextmanager
def no_space_is_an_error(where: object) -> Iterator[None]:
    """Turn a full disk inside the block into :class:`IndexStoreError` naming ``where``."""
    try:
        yield
    except RagsieveError:
        raise
    except Exception as e:
        if is_no_space(e):
            raise IndexStoreError(no_space_message(where)) from e
        raise
