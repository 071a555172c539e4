"""Adopting existing Parquet/ORC files as a Paimon append table: Paimon's ``migrate_table``.

As Java's HiveMigrator and FileMetaUtils do it, the files are not rewritten: each is renamed (moved,
same bytes, same inode on a local disk) into bucket 0 of its partition in the Paimon table, keeping
its name (``.<format>`` appended when it lacks it, since Paimon reads a file's format off its
extension), and described by a DataFileMeta built from the file itself (row count and min/max/null
stats from the Parquet footer, or from the columns for ORC). The table must be an append table with
``bucket = -1`` (Java's "only support unaware-bucket target table"). Everything is read and checked
before the first file moves; if a move or the commit fails, every moved file is moved back, so the
source is either whole or adopted by one snapshot.

A Hive-layout source keeps partition values only in its directory names (``k=v``), not in the files:
Paimon readers take a partition column's value from the file's partition (Java's PartitionInfo), and
such a file's stats cover only its own columns (``_VALUE_STATS_COLS``).

:func:`copy_table` is Paimon's ``copy``: a byte copy of a Paimon table's latest files into a new table.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Tuple
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq

from paimon_sql.commit.table_commit import CommitStore
from paimon_sql.data import binary_row, stats
from paimon_sql.data.partition_names import spec_values
from paimon_sql.exceptions import MigrateError, PaimonError
from paimon_sql.format.file_format import parquet_footer_stats
from paimon_sql.manifest.manifest_file import FILE_SOURCE_APPEND, DataFileMeta
from paimon_sql.write.commit_message import CommitMessage, delete_files


FORMATS = ("parquet", "orc")
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # what Hive and Spark name a NULL partition value


@dataclass(frozen=True)
class SourcePartition:
    """One directory of source files: its ``k=v`` values (text, None for NULL) and its files."""

    spec: Dict[str, Optional[str]]
    files: Tuple[str, ...]


def _hidden(name: str) -> bool:
    return name.startswith("_") or name.startswith(".")  # _SUCCESS, .crc files, _temporary


def partition_keys_of(io, location: str) -> List[str]:
    """The partition keys a Hive-layout directory spells (``k=v`` directory levels), outermost first."""
    keys: List[str] = []
    path = location
    while True:
        dirs = [d for d in io.list_dirs(path) if not _hidden(d)]
        if not dirs or "=" not in dirs[0]:
            return keys
        keys.append(unquote(dirs[0].split("=", 1)[0]))
        path = f"{path}/{dirs[0]}"


def list_source(io, location: str, partition_keys: List[str]) -> List[SourcePartition]:
    """Every data file under ``location`` by partition, ``partition_keys`` deep (hidden names skipped).
    Anything off that layout (a file above the leaves, a directory that is not the next ``key=value``,
    one inside a leaf) fails: the migration would lose it."""
    if not io.is_dir(location):
        raise MigrateError(f"source location {location} is not a directory")
    out: List[SourcePartition] = []

    def walk(path: str, depth: int, spec: Dict[str, Optional[str]]) -> None:
        names = [n for n in io.list_names(path) if not _hidden(n)]
        dirs = set(io.list_dirs(path))
        if depth == len(partition_keys):
            if dirs & set(names):
                raise MigrateError(f"{path} holds directory {sorted(dirs & set(names))[0]} among its data files")
            if names:
                out.append(SourcePartition(dict(spec), tuple(f"{path}/{n}" for n in sorted(names))))
            return
        key = partition_keys[depth]
        for name in sorted(names):
            k, eq, v = name.partition("=")
            if name not in dirs or not eq or unquote(k) != key:
                raise MigrateError(f"{path}/{name} is not a '{key}=<value>' partition directory")
            v = unquote(v)
            walk(f"{path}/{name}", depth + 1, {**spec, key: None if v == HIVE_DEFAULT_PARTITION else v})

    walk(location.rstrip("/"), 0, {})
    return out


def migrate(table: CommitStore, fmt: str, partitions: List[SourcePartition], parallelism: int = 1) -> Optional[int]:
    """Move the files of ``partitions`` into ``table`` and commit them as one APPEND snapshot; the
    snapshot id (None when there was no file). On failure nothing stays moved. ``parallelism``:
    threads reading the files' footers (the moves are renames, done in turn)."""
    if fmt not in FORMATS:
        raise MigrateError(f"cannot migrate '{fmt}' files: only {', '.join(FORMATS)}")
    schema = table.schema
    if schema.is_primary_key_table or table.options.bucket != -1:
        raise MigrateError(f"table '{table.name}' must be an append table with bucket = -1 to adopt files "
                           "as they are (Paimon's unaware-bucket migration)")
    keys = schema.partition_keys
    data_fields = [f for f in schema.fields if f.name not in keys]
    part_types = [f.type for f in schema.fields_of(keys)]
    planned = []  # (origin, target) of every file
    messages = []
    with ThreadPoolExecutor(parallelism) as pool:
        for part in partitions:
            try:
                values = spec_values(schema, part.spec)
            except PaimonError as e:
                raise MigrateError(f"partition {part.spec}: {e}") from None
            pvals = [values[k] for k in keys]
            names = [_target_name(origin, fmt) for origin in part.files]
            metas = list(pool.map(lambda o, n: _file_meta(table, o, n, fmt, data_fields, bool(keys)),
                                  part.files, names))
            sequence = 0  # append files of a bucket numbered in turn, as a writer numbers them
            for i, m in enumerate(metas):
                metas[i] = replace(m, min_sequence_number=sequence,
                                   max_sequence_number=sequence + max(m.row_count - 1, 0))
                sequence += m.row_count
            planned += [(o, table.paths.data_file_path(pvals, 0, n)) for o, n in zip(part.files, names)]
            messages.append(CommitMessage(binary_row.to_bytes(pvals, part_types), 0, -1, new_files=metas))
    if not planned:
        return None
    for _, target in planned:
        if table.io.exists(target):
            raise MigrateError(f"{target} already exists in table '{table.name}'")
    moved: List[Tuple[str, str]] = []
    latest = table.snapshot_manager.latest_id()
    try:
        for origin, target in planned:
            table.io.mkdirs(posixpath.dirname(target))
            table.io.rename(origin, target)
            moved.append((origin, target))
        return table.new_commit().commit(messages)
    except BaseException as e:
        if table.snapshot_manager.latest_id() != latest:  # the snapshot landed (a hint failed after it)
            raise
        for origin, target in reversed(moved):
            table.io.rename(target, origin)
        if isinstance(e, OSError):
            raise MigrateError(f"every file was moved back after: {str(e).splitlines()[0]}") from None
        raise


def _target_name(origin: str, fmt: str) -> str:
    """The file's own name (as Java keeps it), with the format's extension Paimon reads it by."""
    name = posixpath.basename(origin)
    return name if name.endswith("." + fmt) else f"{name}.{fmt}"


def _file_meta(table: CommitStore, path: str, name: str, fmt: str, fields, partitioned: bool) -> DataFileMeta:
    """``path`` described as a level-0 append file named ``name``, checked against ``fields``."""
    io = table.io
    try:
        if fmt == "parquet":
            footer = pq.ParquetFile(io.fs.open_input_file(io.arrow_path(path))).metadata
            file_schema, rows = footer.schema.to_arrow_schema(), footer.num_rows
        else:
            reader = orc.ORCFile(io.fs.open_input_file(io.arrow_path(path)))
            footer, file_schema, rows = None, reader.schema, reader.nrows
    except (OSError, pa.ArrowException) as e:
        raise MigrateError(f"{path} is not a readable {fmt} file: {str(e).splitlines()[0]}") from None
    _check_columns(path, file_schema, fields)
    mode = table.options.stats_mode
    if footer is not None and stats.footer_stats_match(fields):
        value_stats = stats.encode(fields, *parquet_footer_stats(footer, [f.name for f in fields]), mode)
    else:  # stats the footer cannot give as Paimon keeps them: computed over the columns (Arrow)
        data = (pq.read_table(io.arrow_path(path), filesystem=io.fs, columns=[f.name for f in fields])
                if fmt == "parquet" else reader.read(columns=[f.name for f in fields]))
        value_stats = stats.collect(data, fields, mode)
    return DataFileMeta(
        file_name=name, file_size=io.file_size(path), row_count=rows,
        min_key=binary_row.empty_row(), max_key=binary_row.empty_row(), key_stats=stats.EMPTY_STATS,
        value_stats=value_stats, min_sequence_number=0,
        max_sequence_number=0, schema_id=table.schema.id, level=0,
        extra_files=(), creation_time=dt.datetime.now(dt.timezone.utc).replace(microsecond=0),
        delete_row_count=0, embedded_index=None, file_source=FILE_SOURCE_APPEND,
        value_stats_cols=tuple(f.name for f in fields) if partitioned else None, external_path=None)


def _check_columns(path: str, file_schema: pa.Schema, fields) -> None:
    """Every table column (but the partition keys) is in the file with a type that reads as it."""
    for f in fields:
        i = file_schema.get_field_index(f.name)
        if i < 0:
            raise MigrateError(f"{path} has no column '{f.name}' (it has {', '.join(file_schema.names)})")
        try:
            pa.array([], file_schema.field(i).type).cast(f.type.to_arrow())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            raise MigrateError(f"{path}: column '{f.name}' is {file_schema.field(i).type}, "
                               f"the table's is {f.type}") from None


def copy_into(source, target, partitions: Optional[List[bytes]] = None) -> Optional[int]:
    """Paimon's ``copy`` into an existing table: checked as Java's CopySchemaOperator checks it
    (same bucket, file format, primary and partition keys; the target has every column of the
    source), then the source's latest data files (of ``partitions``) are copied under new names
    and replace the whole target in one OVERWRITE snapshot, as paimon-spark commits them. Each file
    is labelled with the target's schema, so one written with columns other than the target's is
    refused (Java would mislabel it). The snapshot id; None when there is no file to copy."""
    src, dst = source.schema, target.schema
    checks = [("bucket", source.options.bucket == target.options.bucket),
              ("format", source.options.get("file.format") == target.options.get("file.format")),
              ("primary keys", set(src.primary_keys) == set(dst.primary_keys)),
              ("partition keys", set(src.partition_keys) == set(dst.partition_keys)),
              ("fields", set(src.fields) <= set(dst.fields))]
    for what, ok in checks:
        if not ok:
            raise MigrateError(f"source table {source.name} {what} is not compatible with the existing table "
                               f"{target.name}")
    entries = _entries_to_copy(source, partitions)
    for e in entries:
        if source.schema_at(e.file.schema_id).fields != dst.fields:
            raise MigrateError(f"file {e.file.file_name} of {source.name} was written with columns other than "
                               f"{target.name}'s: copying it into that table is not supported")
    part_types = [f.type for f in src.fields_of(src.partition_keys)]
    messages: Dict[Tuple[bytes, int], CommitMessage] = {}
    try:
        for e in entries:
            pvals = binary_row.from_bytes(e.partition, part_types)
            name = target.paths.new_data_file_name()
            copied = _copy_files(source, target, pvals, e, name)
            key = (e.partition, e.bucket)
            message = messages.setdefault(key, CommitMessage(e.partition, e.bucket, e.total_buckets))
            message.new_files.append(copied)
        return target.new_commit().overwrite(list(messages.values())) if messages else None
    except BaseException:
        delete_files(target, list(messages.values()))
        raise


def _entries_to_copy(source, partitions: Optional[List[bytes]]):
    """The source's live entries (of ``partitions``) in its latest snapshot; a table with index
    files (deletion vectors, a dynamic-bucket index) is refused."""
    snapshot = source.snapshot_manager.latest()
    if snapshot is not None and snapshot.index_manifest and source.index_manifest_entries(snapshot.index_manifest):
        raise MigrateError(f"table '{source.name}' has index files (deletion vectors or a dynamic-bucket index): "
                           "copying them is not supported")
    entries = source.new_scan().plan_entries() if snapshot is not None else []
    if partitions is not None:
        chosen = set(partitions)
        entries = [e for e in entries if e.partition in chosen]
    return entries


def _copy_files(source, target, pvals, e, name: Optional[str] = None) -> DataFileMeta:
    """Copy a data file (as ``name``, default its own) and its extra files into ``target``'s
    bucket directory; its metadata there."""
    io = source.io
    origin = source.paths.data_file_path(pvals, e.bucket, e.file.file_name, e.file.external_path)
    folder = posixpath.dirname(target.paths.data_file_path(pvals, e.bucket, e.file.file_name))
    io.mkdirs(folder)
    for old, new in [(e.file.file_name, name or e.file.file_name)] + [(x, x) for x in e.file.extra_files]:
        io.fs.copy_file(io.arrow_path(f"{posixpath.dirname(origin)}/{old}"), io.arrow_path(f"{folder}/{new}"))
    if name is None:
        return replace(e.file, external_path=None)
    return replace(e.file, file_name=name, schema_id=target.schema.id, external_path=None)


def copy_table(source, target_path: str, partitions: Optional[List[bytes]] = None) -> Optional[int]:
    """Paimon's ``copy`` (CopyFilesProcedure): a new table at ``target_path`` holding a byte copy of
    ``source``'s latest data files (only those of ``partitions``, binary partition rows, when given)
    and every schema version they were written with, committed as one OVERWRITE snapshot with the
    same file metadata (partition, bucket, level, sequence numbers, stats). The snapshot id (None:
    no file to copy). A failure deletes the new table's directory."""
    io = source.io
    entries = _entries_to_copy(source, partitions)
    if io.exists(target_path):
        raise MigrateError(f"{target_path} exists already")
    part_types = [f.type for f in source.schema.fields_of(source.schema.partition_keys)]
    try:
        for sid in source.schema_manager.list_ids():
            io.write_bytes(f"{target_path}/schema/schema-{sid}", io.read_bytes(source.paths.schema_path(sid)))
        target = type(source)(io, target_path, source.schema, source.name)  # a table of the source's kind
        messages: Dict[Tuple[bytes, int], CommitMessage] = {}
        for e in entries:
            key = (e.partition, e.bucket)
            message = messages.setdefault(key, CommitMessage(e.partition, e.bucket, e.total_buckets))
            message.new_files.append(_copy_files(source, target, binary_row.from_bytes(e.partition, part_types), e))
        return target.new_commit().overwrite(list(messages.values())) if messages else None
    except BaseException:
        io.delete(target_path)
        raise
