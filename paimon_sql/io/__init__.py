"""File access: one FileIO over pyarrow.fs for local paths and s3:// URIs."""

from paimon_sql.io.file_io import FileIO

__all__ = ["FileIO"]
