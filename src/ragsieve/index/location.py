"""Where an index lives: a local directory or an object-store URL.

The store needs a handful of file operations besides Lance's own (the manifest, the write lock,
listing and removing leftovers). On a local directory they are the POSIX ones the atomicity
argument rests on: write a temporary file, ``fsync``, ``os.replace``, ``fsync`` the directory,
and ``flock`` for one writer at a time. An object-store URL (``s3://``, ``gs://``, ``az://``, or
``file://`` for testing the same code path on a local disk) goes through ``pyarrow.fs`` instead:
the manifest is written to a temporary object and then moved over the old one. Replacing an
object is atomic on S3, GCS and Azure (a reader sees the old or the new manifest, never a
mixture), and a move on a local file system is a rename, so the commit point keeps its meaning.

What an object store cannot give is ``flock``: two writers racing on the same index URL are not
detected. Lance's own commits stay consistent, but the last manifest wins. Running one indexing
job per index at a time is the caller's job there (docs/scale-out.md).

Credentials come from the usual environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_REGION``, ``AWS_ENDPOINT_URL``, or an instance role), which both Lance and pyarrow read, or
from ``storage_options`` in Lance's key names; the S3 keys are translated for pyarrow here.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import socket
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from ragsieve.checks import check_path
from ragsieve.errors import IndexStoreError

#: Seconds to connect to an object store (and GCS's retry limit), and per request: with no
#: network an index URL fails in seconds instead of hanging for minutes.
CONNECT_TIMEOUT_S = 10.0
REQUEST_TIMEOUT_S = 60.0

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def is_url(where: str | Path) -> bool:
    """True for ``scheme://...`` strings (object stores, ``file://``); False for plain paths."""
    return isinstance(where, str) and bool(_URL.match(where))


def _s3_filesystem(options: Mapping[str, str]) -> Any:
    """A pyarrow S3 file system from Lance-style storage options (``aws_*``, ``endpoint``)."""
    from pyarrow import fs

    o = {k.lower(): v for k, v in options.items()}
    kwargs: dict[str, Any] = {}
    if "aws_access_key_id" in o:
        kwargs["access_key"] = o["aws_access_key_id"]
        kwargs["secret_key"] = o.get("aws_secret_access_key")
        if "aws_session_token" in o:
            kwargs["session_token"] = o["aws_session_token"]
    if "aws_region" in o or "region" in o:
        kwargs["region"] = o.get("aws_region") or o["region"]
    endpoint = o.get("aws_endpoint") or o.get("endpoint") or o.get("aws_endpoint_url")
    if endpoint:
        scheme, _, host = endpoint.partition("://")
        kwargs["endpoint_override"] = host or scheme
        if host:
            kwargs["scheme"] = scheme
    return fs.S3FileSystem(
        connect_timeout=CONNECT_TIMEOUT_S,
        request_timeout=REQUEST_TIMEOUT_S,
        retry_strategy=fs.AwsStandardS3RetryStrategy(max_attempts=2),
        **kwargs,
    )


class Location:
    """A local index directory or an object-store prefix, with the few operations the store needs.

    ``uri`` is what Lance and LanceDB are given: the absolute path for a local directory (Ray
    workers run in other working directories), the URL otherwise.
    """

    def __init__(self, where: str | Path, storage_options: Mapping[str, str] | None = None) -> None:
        check_path("path", where)  # None, a number: one line naming it, not a TypeError
        self.storage_options: dict[str, str] = dict(storage_options or {})
        self.is_url = is_url(where)
        if self.is_url:
            from pyarrow import fs

            url = str(where).rstrip("/")
            if not str(where).split("://", 1)[1].strip("/"):
                raise IndexStoreError(f"index location {where} names no bucket or path")
            self.uri = url
            self.display = url
            self.path: Path | None = None
            scheme = url.split("://", 1)[0].lower()
            try:
                if scheme in {"s3", "s3a"}:
                    self._fs = _s3_filesystem(self.storage_options)
                    self._root = url.split("://", 1)[1]
                elif scheme in {"gs", "gcs"}:
                    # Bounded retries: with no network the default waits for minutes.
                    self._fs = fs.GcsFileSystem(
                        retry_time_limit=timedelta(seconds=CONNECT_TIMEOUT_S)
                    )
                    self._root = url.split("://", 1)[1]
                else:
                    self._fs, self._root = fs.FileSystem.from_uri(url)
            except Exception as e:  # pyarrow raises ArrowInvalid, OSError, ... for a bad URL
                raise IndexStoreError(
                    f"cannot use index location {url}: {str(e).splitlines()[0]}"
                ) from None
            # Lance's own reads and writes get the same bound (object_store's option names).
            self.storage_options.setdefault("connect_timeout", f"{CONNECT_TIMEOUT_S:g}s")
        else:
            self.path = Path(where)
            self.uri = os.path.abspath(self.path)
            self.display = str(self.path)

    def __str__(self) -> str:
        return self.display

    def child_uri(self, name: str) -> str:
        """The URI of an entry (``chunks.lance``) for Lance readers and writers."""
        return f"{self.uri}/{name}"

    # ------------------------------------------------------------------ inspection
    def _info(self, rel: str = "") -> Any:
        from pyarrow import fs

        path = f"{self._root}/{rel}" if rel else self._root
        try:
            return self._fs.get_file_info(path).type, fs.FileType
        except OSError as e:  # no network, no bucket, no credentials: one line
            raise IndexStoreError(f"cannot reach {self.display}: {str(e).splitlines()[0]}") from e

    def exists(self) -> bool:
        if self.path is not None:
            return self.path.exists()
        kind, ft = self._info()
        return bool(kind != ft.NotFound)

    def is_dir(self) -> bool:
        if self.path is not None:
            return self.path.is_dir()
        kind, ft = self._info()
        return bool(kind == ft.Directory)

    def has_file(self, name: str) -> bool:
        if self.path is not None:
            return (self.path / name).exists()
        kind, ft = self._info(name)
        return bool(kind == ft.File)

    def children(self) -> list[str]:
        """Names of the entries directly inside the location."""
        if self.path is not None:
            return [c.name for c in self.path.iterdir()]
        from pyarrow import fs

        sel = fs.FileSelector(self._root, recursive=False, allow_not_found=True)
        return [i.base_name for i in self._fs.get_file_info(sel)]

    # ------------------------------------------------------------------ changing
    def mkdir(self) -> None:
        """Create the location; a path that cannot be a directory is an index error, one line."""
        if self.path is not None:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                reason = e.strerror or type(e).__name__
                raise IndexStoreError(f"cannot create index directory {self.path}: {reason}") from e
        else:
            self._fs.create_dir(self._root, recursive=True)

    def remove_file(self, name: str) -> None:
        if self.path is not None:
            (self.path / name).unlink(missing_ok=True)
        elif self.has_file(name):
            self._fs.delete_file(f"{self._root}/{name}")

    def remove_tree(self, name: str) -> None:
        if self.path is not None:
            shutil.rmtree(self.path / name)
        else:
            self._fs.delete_dir(f"{self._root}/{name}")

    def read_text(self, name: str) -> str:
        if self.path is not None:
            if not stat.S_ISREG((self.path / name).stat().st_mode):  # a FIFO would block
                raise IndexStoreError(f"{self.path / name} is not a regular file")
            return (self.path / name).read_text("utf-8")
        with self._fs.open_input_stream(f"{self._root}/{name}") as f:
            return bytes(f.read()).decode("utf-8")

    def replace_text(self, name: str, text: str) -> None:
        """Replace ``name`` with ``text`` atomically: readers see the old or the new content."""
        tmp = f".{name}.tmp"
        if self.path is not None:
            with open(self.path / tmp, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(self.path / tmp, self.path / name)
            dfd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
            return
        with self._fs.open_output_stream(f"{self._root}/{tmp}") as f:
            f.write(text.encode("utf-8"))
        self._fs.move(f"{self._root}/{tmp}", f"{self._root}/{name}")

    def has_files_under(self, name: str) -> bool:
        """Whether any file lies (at any depth) under the entry ``name``."""
        if self.path is not None:
            root = self.path / name
            return root.is_dir() and any(f.is_file() for f in root.rglob("*"))
        from pyarrow import fs

        sel = fs.FileSelector(f"{self._root}/{name}", recursive=True, allow_not_found=True)
        return any(i.type == fs.FileType.File for i in self._fs.get_file_info(sel))

    @contextlib.contextmanager
    def write_lock(
        self,
        lock_name: str,
        wait: float = 0.0,
        on_wait: Callable[[str], None] | None = None,
    ) -> Iterator[None]:
        """One writer at a time on a local directory (``flock``); nothing on an object store.

        A writer that finds the lock taken retries for up to ``wait`` seconds, calling
        ``on_wait`` once with a line that names the holder, before it gives up with
        :class:`IndexStoreError`. The holder writes its pid and host into the lock file (for
        that message only: the lock itself is the ``flock``, released by the kernel when the
        holder exits or is killed).
        """
        if self.path is None:
            yield
            return
        lock_path = self.path / lock_name
        if not os.access(self.path, os.W_OK):
            raise IndexStoreError(f"index {self.display} is read-only: cannot write to {self.path}")
        try:
            fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o644)
        except OSError as e:
            raise IndexStoreError(
                f"index {self.display} is not writable: cannot open its write lock "
                f"{lock_path} ({e.strerror or e})"
            ) from e
        try:
            deadline = time.monotonic() + max(0.0, wait)
            told = False
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError as e:
                    holder = _lock_holder(fd)
                    if time.monotonic() >= deadline:
                        waited = f" after waiting {wait:g} s (--wait)" if wait > 0 else ""
                        raise IndexStoreError(
                            f"index {self.display} is being written by another process "
                            f"({holder}){waited}; try again when it has finished"
                        ) from e
                    if not told and on_wait is not None:
                        on_wait(
                            f"waiting up to {wait:g} s for the write lock of {self.display} "
                            f"held by {holder}"
                        )
                        told = True
                    time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
            with contextlib.suppress(OSError):  # the holder note is informative only
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
            yield
        finally:
            os.close(fd)


def _lock_holder(fd: int) -> str:
    """Who holds the lock, as its holder wrote it ("pid 123 on host"), or "another process"."""
    try:
        note = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        note = ""
    return note.splitlines()[0] if note else "another process"
