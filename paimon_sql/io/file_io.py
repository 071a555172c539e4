"""FileIO: the few file operations the format needs, over pyarrow.fs.

Paths are strings: absolute local paths or URIs (``file:///w``, ``s3://bucket/w``). The one
operation with a correctness contract is :meth:`FileIO.try_create`: a snapshot becomes visible by
creating ``snapshot-N`` only if absent, which is how concurrent committers agree on who won.
"""

from __future__ import annotations

import os
import uuid
from typing import List, Optional
from urllib.parse import urlparse

import pyarrow.fs as pafs


class FileIO:
    """A filesystem and the scheme-stripped form of paths on it."""

    def __init__(self, fs: pafs.FileSystem, scheme: str = ""):
        self.fs = fs
        self.scheme = scheme

    @staticmethod
    def for_path(path: str, options: Optional[dict] = None) -> "FileIO":
        """The FileIO serving ``path``: local for plain paths and file://, S3 for s3:// and s3a://."""
        parsed = urlparse(path)
        if parsed.scheme in ("s3", "s3a"):
            return FileIO(_s3_filesystem(options or {}), "s3")
        return FileIO(pafs.LocalFileSystem(), "")

    def _p(self, path: str) -> str:
        """The path as pyarrow.fs wants it: no scheme, bucket first for S3."""
        parsed = urlparse(path)
        if parsed.scheme in ("s3", "s3a"):
            return parsed.netloc + parsed.path
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
        p = self._p(path)
        self.fs.create_dir(os.path.dirname(p), recursive=True)
        with self.fs.open_output_stream(p) as f:
            f.write(data)

    def try_create(self, path: str, data: bytes) -> bool:
        """Create ``path`` with ``data`` only if it does not exist yet; True if we created it.

        Local: the bytes go to a temporary file that is then hard-linked to the target, which the
        OS refuses if the target exists, so readers never see a partial file and two writers
        never both succeed. S3 has no rename; the existence check and put are not atomic there
        (a lock or conditional put is needed for concurrent S3 writers; see docs/format.md).
        """
        p = self._p(path)
        if self.scheme == "":
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
        self.fs.move(self._p(src), self._p(dst))

    def arrow_path(self, path: str) -> str:
        """The path as handed to pyarrow readers/writers together with ``self.fs``."""
        return self._p(path)


def _s3_filesystem(options: dict) -> pafs.S3FileSystem:
    """S3 from options (``s3.endpoint``, ``s3.access-key``, ``s3.secret-key``, ``s3.region``) or the env."""
    endpoint = options.get("s3.endpoint") or os.environ.get("AWS_ENDPOINT_URL")
    kwargs = {
        "access_key": options.get("s3.access-key") or os.environ.get("AWS_ACCESS_KEY_ID"),
        "secret_key": options.get("s3.secret-key") or os.environ.get("AWS_SECRET_ACCESS_KEY"),
        "region": options.get("s3.region") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1",
    }
    if endpoint:
        parsed = urlparse(endpoint)
        kwargs["endpoint_override"] = parsed.netloc or parsed.path
        kwargs["scheme"] = parsed.scheme or "http"
    if options.get("s3.path.style.access", "true") == "true":
        kwargs["force_virtual_addressing"] = False
    return pafs.S3FileSystem(**{k: v for k, v in kwargs.items() if v is not None})
