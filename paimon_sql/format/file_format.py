"""Data file formats: Parquet (default), ORC and Avro, read and written as Arrow.

Parquet and ORC go through pyarrow's native readers and writers. Avro data files (rare in Paimon
tables) go through fastavro record by record (``avro_data``), which is correct but slow; the docs say so.

Decimals are stored as Java Paimon stores them (``ParquetSchemaConverter``): in Parquet INT32 for
precision <= 9, INT64 for <= 18, else FIXED_LEN_BYTE_ARRAY of the fewest bytes that hold the
precision, each annotated DECIMAL(p, s) — pyarrow's default (FIXED_LEN_BYTE_ARRAY for every
precision) is a file Paimon 1.0's reader rejects. ORC ``decimal(p,s)`` and Avro ``bytes`` with the
``decimal`` logical type are what pyarrow and fastavro write already. Old files of ours with
FIXED_LEN_BYTE_ARRAY small decimals still read (Parquet readers accept every decimal encoding).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import List, Mapping, Optional

import numpy as np
import pyarrow as pa
import pyarrow.orc as paorc
import pyarrow.parquet as pq

from paimon_sql.exceptions import CorruptDataFileError, SchemaError
from paimon_sql.format import writer_settings
from paimon_sql.format.avro_data import avro_bytes, avro_table
from paimon_sql.io import FileIO

FORMATS = ("parquet", "orc", "avro")
_BUFFER = 1 << 20
_PARQUET_CODECS = {"zstd": "zstd", "snappy": "snappy", "gzip": "gzip", "lz4": "lz4", "none": "none",
                   "uncompressed": "none", "brotli": "brotli"}


def check_format(fmt: str) -> str:
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise SchemaError(f"file.format '{fmt}' is not supported (parquet, orc, avro)")
    return fmt


class RollingFileWriter:
    """Writes one Arrow schema to a file, reporting bytes written so callers can roll at a size.

    ``options`` (the table's) set the writer as Paimon sets its own (``writer_settings``). A
    Parquet writer opens at the first write: that batch's first rows decide which columns get a
    dictionary."""

    def __init__(self, io: FileIO, path: str, schema: pa.Schema, fmt: str, compression: str,
                 bloom_filter_options: Optional[dict] = None, options: Optional[Mapping[str, str]] = None):
        self.io, self.path, self.schema, self.fmt = io, path, schema, check_format(fmt)
        self.options = options or {}
        self.rows = 0
        self.metadata = None  # a Parquet file's footer (FileMetaData) once closed
        self._tables: List[pa.Table] = []
        self._writer = None
        # settings first: an option refused leaves no file behind
        self._row_group_bytes = writer_settings.row_group_bytes(self.options)
        if self.fmt == "parquet":
            codec = _PARQUET_CODECS.get(compression, "zstd")
            self._parquet = dict(writer_settings.parquet_writer_args(self.options, codec), compression=codec,
                                 write_statistics=True, bloom_filter_options=bloom_filter_options,
                                 store_decimal_as_integer=True, store_schema=False)
        if self.fmt == "parquet":
            self._sink = io.open_output(path, _BUFFER)
        elif self.fmt == "orc":
            self._sink = io.open_output(path, _BUFFER)
            self._writer = paorc.ORCWriter(self._sink, compression=compression if compression != "none"
                                           else "uncompressed",
                                           stripe_size=writer_settings.orc_stripe_bytes(self.options))
        self.compression = compression

    def _open_parquet(self, first: pa.Table) -> None:
        self._writer = pq.ParquetWriter(self._sink, self.schema, **self._parquet,
                                        use_dictionary=writer_settings.dictionary_columns(self.options, first))

    def write(self, table: pa.Table) -> None:
        self.rows += table.num_rows
        if self.fmt == "avro":
            self._tables.append(table)
            return
        if self._writer is None:
            self._open_parquet(table)
        self._writer.write(table)

    @property
    def bytes_written(self) -> int:
        if self.fmt == "avro":
            return sum(t.nbytes for t in self._tables) // 2
        return self._sink.tell()

    def rows_to_write(self, target: float, plain_bytes_per_row: float) -> int:
        """How many rows the next :meth:`write` (one Parquet row group) should take: enough to bring
        the file to ``target`` bytes, at most ``parquet.block.size`` of them, as parquet-mr cuts row
        groups. Rows are counted by the bytes per row written so far; before the first write by
        ``plain_bytes_per_row``, the rows' size in memory, more than they take in the file, so the
        first row group stays under both limits."""
        room = min(target - self.bytes_written, self._row_group_bytes)
        per_row = self.bytes_written / self.rows if self.rows else plain_bytes_per_row
        return max(1, int(room / max(per_row, 1.0)))

    def close(self) -> int:
        """Finish the file; returns its size in bytes."""
        if self.fmt == "avro":
            table = pa.concat_tables(self._tables) if self._tables else self.schema.empty_table()
            level = writer_settings.zstd_level(self.options)
            self.io.write_bytes(self.path, avro_bytes(table, self.compression, level))
        else:
            if self._writer is None:
                self._open_parquet(self.schema.empty_table())
            self._writer.close()
            self._sink.close()
            if self.fmt == "parquet":
                self.metadata = self._writer.writer.metadata
        return self.io.file_size(self.path)

    def abort(self) -> None:
        try:
            if self.fmt != "avro":
                if self._writer is not None:
                    self._writer.close()
                self._sink.close()
        finally:
            self.io.delete(self.path)


def parquet_footer_stats(meta, columns: List[str]):
    """Per column of a Parquet footer: min, max (None when a row group lacks them) and null count."""
    index = {meta.schema.column(i).name: i for i in range(meta.num_columns)}
    mins, maxs, nulls = [], [], []
    for c in columns:
        lo = hi = None
        count, bounded = 0, True
        for rg in range(meta.num_row_groups):
            st = meta.row_group(rg).column(index[c]).statistics
            if st is None or not st.has_null_count:
                count, bounded = None, False
                break
            count += st.null_count
            if st.has_min_max:
                lo = st.min if lo is None or st.min < lo else lo
                hi = st.max if hi is None or st.max > hi else hi
            elif st.null_count != meta.row_group(rg).num_rows:
                bounded = False
        mins.append(lo if bounded else None)
        maxs.append(hi if bounded else None)
        nulls.append(count)
    return mins, maxs, nulls


def check_size(path: str, size: Optional[int], expected: Optional[int]) -> None:
    """Fail unless the data file exists (``size`` not None) with the size its manifest entry records:
    a zero-byte, cut or overwritten file is caught before a reader can make fewer rows of it."""
    if size is None:
        raise CorruptDataFileError(f"data file {path} is missing")
    if expected is not None and size != expected:
        raise CorruptDataFileError(f"data file {path} has {size} bytes, its manifest entry says {expected}")


# what readers raise on bytes that are not a valid file (pyarrow: ArrowInvalid is a ValueError, IO
# errors OSError; fastavro: ValueError, EOFError, codec errors turned into ValueError by avro_table)
_DECODE_ERRORS = (OSError, ValueError, EOFError, KeyError, IndexError, pa.ArrowException)


def read_file(io: FileIO, path: str, fmt: str, columns: Optional[List[str]] = None,
              deleted: Optional[np.ndarray] = None, file_size: Optional[int] = None,
              row_count: Optional[int] = None) -> pa.Table:
    """Read a whole data file (only ``columns`` when given); without the row positions in
    ``deleted`` (sorted int64) — Parquet skips them as it decodes, other formats filter after.

    ``file_size`` and ``row_count`` (the manifest entry's) are checked against the file's length,
    known once it is open, and its row count: a damaged file fails with
    :class:`CorruptDataFileError` naming it, never reads as fewer rows."""
    fmt = check_format(fmt)
    try:
        with io.fs.open_input_file(io.arrow_path(path)) as source:
            check_size(path, source.size(), file_size)
            table, rows = _READERS[fmt](io, path, source, columns, deleted)
    except FileNotFoundError:
        check_size(path, None, file_size)  # raises: missing
    except _DECODE_ERRORS as e:
        reason = next((line.strip() for line in str(e).splitlines() if line.strip()), type(e).__name__)
        raise CorruptDataFileError(f"data file {path} cannot be read: {reason}") from None
    if row_count is not None and rows != row_count:
        raise CorruptDataFileError(f"data file {path} holds {rows} rows, its manifest entry says {row_count}")
    return table


def without_rows(table: pa.Table, deleted: Optional[np.ndarray]) -> pa.Table:
    """``table`` less the row positions in ``deleted`` (a deletion vector's, sorted int64)."""
    if deleted is None or not len(deleted):
        return table
    keep = np.ones(table.num_rows, bool)
    keep[deleted[deleted < table.num_rows]] = False
    return table.filter(pa.array(keep))


def _read_parquet(io: FileIO, path: str, source, columns, deleted):
    """(rows less ``deleted``, rows in the file)."""
    if deleted is None or not len(deleted):
        table = pq.read_table(source, columns=columns)
        return table, table.num_rows
    meta = pq.ParquetFile(source).metadata
    return _read_parquet_without(io, path, meta, columns, deleted), meta.num_rows


def _read_orc(io: FileIO, path: str, source, columns, deleted):
    """ORC reads no rows for an empty column list (``SELECT count(*)``): one column is read, then dropped."""
    none = columns is not None and not columns
    table = paorc.ORCFile(source).read(columns=[0] if none else columns)
    return without_rows(table.select([]) if none else table, deleted), table.num_rows


def _read_avro(io: FileIO, path: str, source, columns, deleted):
    table = avro_table(source.read())
    return without_rows(table.select(columns) if columns is not None else table, deleted), table.num_rows


_READERS = {"parquet": _read_parquet, "orc": _read_orc, "avro": _read_avro}
_BATCH_ROWS = 1 << 15


def _read_parquet_without(io: FileIO, path: str, meta, columns, deleted: np.ndarray) -> pa.Table:
    """Row groups decoded on several threads (each with its own reader: one Parquet reader is not
    to be shared between threads); a batch holding deleted positions is filtered right after it is
    decoded, while it is in cache; a row group whose rows are all deleted is never decoded."""
    where = io.arrow_path(path)
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    def group(i: int) -> List[pa.RecordBatch]:
        lo, hi = np.searchsorted(deleted, [starts[i], starts[i + 1]])
        gone = deleted[lo:hi] - starts[i]  # positions within the row group
        if len(gone) == sizes[i]:
            return []
        out, offset = [], 0
        with io.fs.open_input_file(where) as f:
            reader = pq.ParquetFile(f, metadata=meta)
            for batch in reader.iter_batches(batch_size=_BATCH_ROWS, row_groups=[i], columns=columns,
                                             use_threads=False):
                n = batch.num_rows
                a, b = np.searchsorted(gone, [offset, offset + n])
                if a < b:
                    keep = np.ones(n, bool)
                    keep[gone[a:b] - offset] = False
                    batch = batch.filter(pa.array(keep))
                offset += n
                out.append(batch)
        return out

    with ThreadPoolExecutor(max_workers=max(1, min(len(sizes), os.cpu_count() or 2))) as pool:
        batches = [b for bs in pool.map(group, range(len(sizes))) for b in bs]
    schema = meta.schema.to_arrow_schema()
    return pa.Table.from_batches(batches, schema=schema if columns is None else pa.schema([schema.field(c)
                                                                                         for c in columns]))
