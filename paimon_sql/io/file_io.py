"""FileIO: the few file operations the format needs, over pyarrow.fs.

Paths are strings: absolute local paths or URIs (``file:///w``, ``s3://bucket/w``, ``gs://bucket/w``,
``abfs://container@account.dfs.core.windows.net/w``). The one operation with a correctness contract
is :meth:`FileIO.try_create`: a snapshot becomes visible by creating ``snapshot-N`` only if absent,
which is how concurrent committers agree on who won; never by a rename, which object stores do not
have (:mod:`paimon_sql.io.object_stores`).
"""

from __future__ import annotations

import os
import uuid
from typing import List, Optional
from urllib.parse import urlparse

import pyarrow.fs as pafs

from paimon_sql.exceptions import InvalidOptionError
from paimon_sql.io.azure_store import AzureConfig, AzureStore, azure_location
from paimon_sql.io.gcs_store import GcsConfig, GcsStore
from paimon_sql.io.object_stores import (
    AZURE_SCHEMES,
    GCS_SCHEMES,
    S3_SCHEMES,
    CommitGuard,
    S3Config,
    S3Store,
)

_CREATE_TRIES = 5  # a directory removed under a writer this many times running is a real failure


class FileIO:
    """A filesystem and the scheme-stripped form of paths on it. ``store`` creates files
    conditionally on an object store (S3, GCS, Azure); ``guard`` says whether an unconditional
    create is safe where it cannot (the catalog's lock, or a single writer)."""

    def __init__(self, fs: pafs.FileSystem, scheme: str = "", store=None,
                 guard: CommitGuard = CommitGuard()):
        self.fs = fs
        self.scheme = scheme
        self.store = store
        self.guard = guard

    @staticmethod
    def for_path(path: str, options: Optional[dict] = None) -> "FileIO":
        """The FileIO serving ``path``: local for plain paths and file://, else the object store its
        scheme names, configured by the catalog ``options`` (``s3.*``, ``gs.*``, ``fs.azure.*``)."""
        options = options or {}
        scheme = urlparse(path).scheme
        if scheme in S3_SCHEMES:
            config = S3Config.of(options)
            return FileIO(config.filesystem(), "s3", S3Store(config), CommitGuard.of(options))
        if scheme in GCS_SCHEMES:
            config = GcsConfig.of(options)
            return FileIO(config.filesystem(), "gs", GcsStore(config), CommitGuard.of(options))
        if scheme in AZURE_SCHEMES:
            config = AzureConfig.of(azure_location(urlparse(path).netloc)[0], options)
            return FileIO(config.filesystem(), "abfs", AzureStore(config), CommitGuard.of(options))
        if scheme not in ("", "file"):
            raise InvalidOptionError(f"warehouse scheme '{scheme}://' is not supported "
                                     f"(local paths, file://, s3://, s3a://, gs://, abfs://, abfss://)")
        return FileIO(pafs.LocalFileSystem(), "")

    def _p(self, path: str) -> str:
        """The path as pyarrow.fs wants it: no scheme, bucket first for S3."""
        parsed = urlparse(path)
        if parsed.scheme in S3_SCHEMES + GCS_SCHEMES:
            return parsed.netloc + parsed.path
        if parsed.scheme in AZURE_SCHEMES:  # the account is the filesystem's root: container/path
            return azure_location(parsed.netloc)[1] + parsed.path
        if parsed.scheme == "file":
            return parsed.path
        return path

    def exists(self, path: str) -> bool:
        return self.fs.get_file_info(self._p(path)).type != pafs.FileType.NotFound

    def is_dir(self, path: str) -> bool:
        return self.fs.get_file_info(self._p(path)).type == pafs.FileType.Directory

    def file_size(self, path: str) -> int:
        return self.fs.get_file_info(self._p(path)).size

    def modification_millis(self, path: str) -> Optional[int]:
        """Last modification time in epoch millis (None when the store does not say)."""
        mtime = self.fs.get_file_info(self._p(path)).mtime
        return None if mtime is None else int(mtime.timestamp() * 1000)

    def read_bytes(self, path: str) -> bytes:
        with self.fs.open_input_stream(self._p(path)) as f:
            return f.read()

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8")

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write (or replace) a file whole; parents are created as needed."""
        with self.open_output(path) as f:
            f.write(data)

    def open_output(self, path: str, buffer_size: Optional[int] = None) -> pafs.NativeFile:
        """An output stream to a new (or replaced) file, its parents created. Orphan-file removal
        deletes empty local directories (maintenance/remove_orphan_files.py): one it removes while
        we create the directories or before the file is opened is made again, so a writer beside
        it never fails for that."""
        p, tries = self._p(path), 1
        while True:
            try:
                self.fs.create_dir(os.path.dirname(p), recursive=True)
                return self.fs.open_output_stream(p, buffer_size=buffer_size)
            except FileNotFoundError:
                if tries == _CREATE_TRIES:
                    raise
                tries += 1

    def try_create(self, path: str, data: bytes) -> bool:
        """Create ``path`` with ``data`` only if it does not exist yet; True if we created it.

        Local: the bytes go to a temporary file that is then hard-linked to the target, which the
        OS refuses if the target exists, so readers never see a partial file and two writers
        never both succeed. Object stores: a conditional PUT (S3, Azure: ``If-None-Match: *``;
        GCS: ``ifGenerationMatch=0``). Where that is unavailable (S3 with
        ``s3.create.conditional.enabled`` = false or a store without conditional puts; a missing
        client library or Azure credentials) a create checks and writes, which is only safe under the catalog's
        lock (the caller holds it) or for a single writer; otherwise the create is refused.
        """
        p = self._p(path)
        if self.scheme == "":
            return _link_create(p, data)
        created = self.store.put_if_absent(p, data)
        if created is not None:
            return created
        self.guard.refuse(f"{self.scheme}://{p.split('/', 1)[0]}", self.store.why_not())
        if self.exists(path):
            return False
        self.write_bytes(path, data)
        return True

    def list_names(self, path: str) -> List[str]:
        """Names (not paths) directly inside a directory; empty when it does not exist."""
        p = self._p(path)
        if self.fs.get_file_info(p).type != pafs.FileType.Directory:
            return []
        selector = pafs.FileSelector(p, recursive=False, allow_not_found=True)
        return [info.base_name for info in self.fs.get_file_info(selector)]

    def list_dirs(self, path: str) -> List[str]:
        p = self._p(path)
        selector = pafs.FileSelector(p, recursive=False, allow_not_found=True)
        return [i.base_name for i in self.fs.get_file_info(selector) if i.type == pafs.FileType.Directory]

    def mkdirs(self, path: str) -> None:
        self.fs.create_dir(self._p(path), recursive=True)

    def delete(self, path: str) -> None:
        p = self._p(path)
        info = self.fs.get_file_info(p)
        if info.type == pafs.FileType.Directory:
            self.fs.delete_dir(p)
        elif info.type != pafs.FileType.NotFound:
            self.fs.delete_file(p)

    def rename(self, src: str, dst: str) -> None:
        """Move a file or directory. Object stores have no rename: each file is copied, then the
        source deleted, as Hadoop's S3A renames; not atomic (never used to commit)."""
        s, d = self._p(src), self._p(dst)
        if self.scheme == "":
            self.fs.move(s, d)
            return
        if self.fs.get_file_info(s).type != pafs.FileType.Directory:
            self.fs.copy_file(s, d)
            self.fs.delete_file(s)
            return
        made = set()  # folders exist as markers where the store has none (GCS), as write_bytes makes them
        for info in self.fs.get_file_info(pafs.FileSelector(s, recursive=True)):
            if info.type == pafs.FileType.File:
                target = d + info.path[len(s):]
                if os.path.dirname(target) not in made:
                    self.fs.create_dir(os.path.dirname(target), recursive=True)
                    made.add(os.path.dirname(target))
                self.fs.copy_file(info.path, target)
        self.fs.delete_dir(s)

    def arrow_path(self, path: str) -> str:
        """The path as handed to pyarrow readers/writers together with ``self.fs``."""
        return self._p(path)


def _link_create(p: str, data: bytes) -> bool:
    directory = os.path.dirname(p)
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(p)}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    try:
        os.link(tmp, p)
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)
