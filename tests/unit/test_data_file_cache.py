"""DataFileCache: decoded files kept and reused, their deletion vectors applied after, a file cut
since reported as on any read, and the oldest dropped past the capacity."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_sql.exceptions import CorruptDataFileError
from paimon_sql.io.file_io import FileIO
from paimon_sql.read.data_file_cache import DataFileCache


def _file(tmp_path, name: str, rows: int):
    path = str(tmp_path / name)
    pq.write_table(pa.table({"k": np.arange(rows, dtype=np.int64), "v": np.arange(rows) * 2.0}), path)
    return path, FileIO.for_path(path).file_size(path)


def test_a_file_is_decoded_once_and_read_again_from_memory(tmp_path):
    io = FileIO.for_path(str(tmp_path))
    path, size = _file(tmp_path, "a.parquet", 100)
    cache = DataFileCache(1 << 20)
    first = cache.read(io, path, "parquet", ["k"], None, size, 100)
    again = cache.read(io, path, "parquet", ["k"], None, size, 100)
    assert len(cache) == 1 and again.column("k").equals(first.column("k")) and again.num_rows == 100
    cache.read(io, path, "parquet", ["k", "v"], None, size, 100)  # other columns: their own entry
    assert len(cache) == 2


def test_deleted_rows_are_dropped_after_the_cached_decode(tmp_path):
    io = FileIO.for_path(str(tmp_path))
    path, size = _file(tmp_path, "a.parquet", 10)
    cache = DataFileCache(1 << 20)
    cache.read(io, path, "parquet", ["k"], None, size, 10)
    rows = cache.read(io, path, "parquet", ["k"], np.array([0, 3, 9], np.int64), size, 10)
    assert rows.column("k").to_pylist() == [1, 2, 4, 5, 6, 7, 8]


def test_a_cached_file_cut_or_gone_since_fails_as_on_any_read(tmp_path):
    io = FileIO.for_path(str(tmp_path))
    path, size = _file(tmp_path, "a.parquet", 10)
    cache = DataFileCache(1 << 20)
    cache.read(io, path, "parquet", ["k"], None, size, 10)
    with open(path, "r+b") as f:
        f.truncate(size - 5)
    with pytest.raises(CorruptDataFileError, match=f"{size - 5} bytes"):
        cache.read(io, path, "parquet", ["k"], None, size, 10)
    (tmp_path / "a.parquet").unlink()
    with pytest.raises(CorruptDataFileError, match="missing"):
        cache.read(io, path, "parquet", ["k"], None, size, 10)


def test_the_least_recently_used_go_past_the_capacity(tmp_path):
    io = FileIO.for_path(str(tmp_path))
    files = [_file(tmp_path, f"{i}.parquet", 1000) for i in range(5)]  # 8,125 bytes of k each
    cache = DataFileCache(33_000)  # four of them
    for path, size in files[:4]:
        cache.read(io, path, "parquet", ["k"], None, size, 1000)
    cache.read(io, files[0][0], "parquet", ["k"], None, files[0][1], 1000)  # 0 used last: 1 is the oldest
    cache.read(io, files[4][0], "parquet", ["k"], None, files[4][1], 1000)
    assert {key[0] for key in cache._entries} == {files[i][0] for i in (0, 2, 3, 4)}
    cache.read(io, files[0][0], "parquet", ["k", "v"], None, files[0][1], 1000)  # 16,250: over a quarter
    assert len(cache) == 4
