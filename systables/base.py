"""SystemTable: a read-only table computed from a table's metadata (``t$snapshots``, ``t$files``...).

Each system table is one module of this package defining one subclass, registered once by
:func:`register` under its Paimon name. A subclass declares its columns as Paimon fields and
builds its rows as Arrow in :meth:`SystemTable.rows`; the columns in ``pushdown`` are the ones
whose predicates it uses to read less metadata (Spark still applies the whole WHERE). Data
system tables (``$ro``, ``$audit_log``, ``$binlog``) override :meth:`to_dataframe` to scan data
files with Spark instead.
"""

from __future__ import annotations

import datetime as dt
from typing import Callable, ClassVar, Dict, FrozenSet, List, Optional, Sequence

import pyarrow as pa

from paimon_sql.data import binary_row
from paimon_sql.data.partition_names import cast_text
from paimon_sql.data.predicate import Predicate, and_, equal, or_
from paimon_sql.data.types import DataField, parse_type
from paimon_sql.read.postpone import real_buckets
from paimon_sql.spark.types import spark_ddl, to_spark_arrow
from paimon_sql.store.time_travel import travel_snapshot

SYSTEM_TABLES: Dict[str, type] = {}
GLOBAL_TABLES: Dict[str, type] = {}


def register(cls):
    """Class decorator: file a system table under its ``name`` (``GLOBAL`` ones in database sys)."""
    (GLOBAL_TABLES if cls.is_global else SYSTEM_TABLES)[cls.name] = cls
    return cls


def columns(*spec: str) -> List[DataField]:
    """Fields from ``"name TYPE"`` strings, numbered in order."""
    out = []
    for i, s in enumerate(spec):
        name, type_text = s.split(" ", 1)
        out.append(DataField(i, name, parse_type(type_text)))
    return out


class SystemTable:
    name: ClassVar[str] = ""
    is_global: ClassVar[bool] = False
    FIELDS: ClassVar[List[DataField]] = []
    pushdown: ClassVar[FrozenSet[str]] = frozenset()

    def __init__(self, table):
        self.table = table  # a FileStoreTable (a Catalog for global tables)

    @classmethod
    def supports(cls, table) -> bool:
        """Whether ``table`` has this system table (listings leave out those it has not)."""
        return True

    @property
    def full_name(self) -> str:
        return f"sys.{self.name}" if self.is_global else f"{self.table.name}${self.name}"

    @property
    def fields(self) -> List[DataField]:
        return self.FIELDS

    @property
    def field_names(self) -> List[str]:
        return [f.name for f in self.fields]

    def arrow_schema(self) -> pa.Schema:
        return pa.schema([pa.field(f.name, f.type.to_arrow(), True) for f in self.fields])

    def rows(self, predicate: Optional[Predicate] = None) -> pa.Table:
        raise NotImplementedError

    def table_of(self, data: Dict[str, list]) -> pa.Table:
        """Columns given as Python lists → an Arrow table of this system table's schema."""
        schema = self.arrow_schema()
        return pa.Table.from_arrays([pa.array(data[f.name], f.type) for f in schema], schema=schema)

    def from_rows(self, rows: List[dict]) -> pa.Table:
        """Rows given as dicts (column → value) → an Arrow table of this system table's schema."""
        return self.table_of({f.name: [r[f.name] for r in rows] for f in self.fields})

    def to_dataframe(self, session, columns: Optional[Sequence[str]] = None, predicate: Optional[Predicate] = None):
        """The rows as a Spark DataFrame (Spark applies the query's filters again)."""
        fields = self.fields if columns is None else [f for f in self.fields if f.name in set(columns)]
        data = to_spark_arrow(self.rows(predicate), fields)
        if data.num_rows == 0:  # Spark cannot convert an Arrow table without chunks
            return session.spark.createDataFrame([], schema=spark_ddl(fields))
        return session.spark.createDataFrame(data, schema=spark_ddl(fields))


# -- rendering shared by the metadata tables ---------------------------------------------------

def local_time(millis: Optional[int]) -> Optional[dt.datetime]:
    """Epoch millis as the local wall-clock time Paimon shows in TIMESTAMP(3) columns."""
    return None if millis is None else dt.datetime.fromtimestamp(millis / 1000)


def value_text(v) -> str:
    """A value as Java's ``toString`` prints it inside ``{...}`` / ``[...]`` renderings."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, dt.datetime):
        return v.isoformat()
    return str(v)


def partition_renderer(table) -> Callable[[bytes], str]:
    """Partition bytes → ``{v1, v2}`` (Paimon's cast of the partition row to a string; ``{}`` for
    an unpartitioned table's empty row)."""
    types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    cache: Dict[bytes, str] = {}

    def render(part: bytes) -> str:
        if part not in cache:
            values = binary_row.from_bytes(part, types)
            cache[part] = "{" + ", ".join(cast_text(v, t) for v, t in zip(values, types)) + "}"
        return cache[part]
    return render


def partition_spec_renderer(table, legacy: Optional[bool] = False) -> Callable[[bytes], str]:
    """Partition bytes → ``k1=v1/k2=v2`` as Java's ``$partitions`` shows it: each value cast to
    STRING, unescaped, whatever ``partition.legacy-name`` names the directories (an unpartitioned
    table's one row: empty text). ``legacy`` None: spelled as the table names its directories
    (``sys.partitions``, from the catalog's partition specs)."""
    keys = table.schema.partition_keys
    types = [f.type for f in table.schema.fields_of(keys)]
    paths = table.paths

    def render(part: bytes) -> str:
        spec = paths.partition_spec(binary_row.from_bytes(part, types), legacy=legacy) if keys else []
        return "/".join(f"{k}={text}" for k, text in spec)
    return render


def partition_values_predicate(table, predicate: Optional[Predicate]) -> Optional[Predicate]:
    """``partition = '{v1, v2}'`` / ``partition IN (...)`` conjuncts as a predicate on the partition
    columns, so manifests are skipped by their partition stats (None when there is none to use)."""
    keys = table.schema.partition_keys
    part = predicate.only({"partition"}) if predicate is not None and keys else None
    if part is None:
        return None
    conjuncts = part.children if part.op == "and" else (part,)
    types = [f.type for f in table.schema.fields_of(keys)]
    out = []
    for c in conjuncts:
        if c.op not in ("=", "in"):
            continue
        rows = [_partition_values(text, types) for text in c.literals]
        if any(r is None for r in rows):
            continue
        out.append(or_(*[and_(*[equal(k, v) for k, v in zip(keys, r)]) for r in rows]))
    return and_(*out) if out else None


def _partition_values(text, types) -> Optional[list]:
    """``'{v1, v2}'`` back to typed values (None when it cannot be read back exactly)."""
    if not isinstance(text, str) or not (text.startswith("{") and text.endswith("}")):
        return None
    parts = text[1:-1].split(", ")
    if len(parts) != len(types):
        return None
    out = []
    for p, t in zip(parts, types):
        name = getattr(t, "name", "")
        if p == "null":  # a NULL partition value and the string 'null' print alike
            return None
        try:
            if name in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
                out.append(int(p))
            elif name in ("CHAR", "VARCHAR"):
                out.append(p)
            elif name == "DATE":
                out.append(dt.date.fromisoformat(p))
            else:
                return None
        except ValueError:
            return None
    return out


def pushed_value_test(predicate: Optional[Predicate], names: Sequence[str]) -> Callable[[dict], bool]:
    """A test of a row's values against the part of ``predicate`` on ``names`` (True when none)."""
    part = predicate.only(set(names)) if predicate is not None else None
    return (lambda values: True) if part is None else part.test_values


class SnapshotMetadataTable(SystemTable):
    """A system table over one snapshot's files: the latest, or the one time travel names
    (``/*+ OPTIONS('scan.snapshot-id'='1') */``, ``VERSION AS OF``)."""

    def snapshot(self):
        return travel_snapshot(self.table)

    def live_entries(self, predicate: Optional[Predicate] = None, postpone: bool = False):
        """The snapshot's live data files, narrowed by the pushed ``partition``/``bucket``/``level``
        conjuncts before any stats are decoded: ``(entry, partition text, bucket directory)``. A
        postpone table's unassigned files (bucket -2) only with ``postpone``: Java's ``$files`` plans
        with the batch scan, which reads real buckets only, its ``$buckets`` with a snapshot reader."""
        snap = self.snapshot()
        if snap is None:
            return []
        part_text = partition_renderer(self.table)
        wanted = pushed_value_test(predicate, ["partition", "bucket", "level"])
        types = [f.type for f in self.table.schema.fields_of(self.table.schema.partition_keys)]
        scan = self.table.new_scan().with_snapshot(snap.id).filter(partition_values_predicate(self.table, predicate))
        out = []
        entries = scan.plan_entries()
        for e in entries if postpone else real_buckets(self.table, entries):
            text = part_text(e.partition)
            if wanted({"partition": text, "bucket": e.bucket, "level": e.file.level}):
                out.append((e, text, self.table.paths.bucket_dir(binary_row.from_bytes(e.partition, types), e.bucket)))
        return out

    def key_text(self, f, key: bytes) -> Optional[str]:
        """A primary-key file's min/max key as ``[v1, v2]`` (None for append files' empty keys)."""
        if len(key) <= 4 or not self.table.schema.primary_keys:
            return None
        schema = self.table.schema_at(f.schema_id)
        types = [x.type for x in schema.fields_of(schema.trimmed_primary_keys)]
        return "[" + ", ".join(value_text(v) for v in binary_row.from_bytes(key, types)) + "]"

    def file_columns(self, e, part: Optional[str], bucket_dir: str) -> dict:
        """The columns ``$files`` and ``$file_key_ranges`` share, for one manifest entry."""
        f = e.file
        return {"partition": part, "bucket": e.bucket, "file_path": f.external_path or f"{bucket_dir}/{f.file_name}",
                "file_format": f.file_name.rsplit(".", 1)[-1], "schema_id": f.schema_id, "level": f.level,
                "record_count": f.row_count, "file_size_in_bytes": f.file_size,
                "min_key": self.key_text(f, f.min_key), "max_key": self.key_text(f, f.max_key),
                "first_row_id": f.first_row_id}

    def file_rows(self, predicate, extra=lambda f: {}) -> pa.Table:
        """One row per live file: :meth:`file_columns` plus ``extra(file meta)``."""
        return self.from_rows([{**self.file_columns(e, part, bucket_dir), **extra(e.file)}
                               for e, part, bucket_dir in self.live_entries(predicate)])


class GlobalSystemTable(SystemTable):
    """A ``sys.<name>`` table: ``self.table`` is the catalog; rows cover each of its tables."""

    is_global = True

    def tables(self, predicate: Optional[Predicate] = None):
        """(database, table name, FileStoreTable) of every table the pushed ``database_name`` /
        ``table_name`` conjuncts admit (those are tested before a table is opened)."""
        catalog = self.table
        wanted = pushed_value_test(predicate, ["database_name", "table_name"])
        for db in catalog.list_databases():
            for name in catalog.list_tables(db):
                if wanted({"database_name": db, "table_name": name}):
                    yield db, name, catalog.get_table(f"{db}.{name}")


def file_totals(entries) -> tuple:
    """(records, bytes, files, last creation millis) of manifest entries."""
    last = max((e.file.creation_time for e in entries if e.file.creation_time is not None), default=None)
    return (sum(e.file.row_count for e in entries), sum(e.file.file_size for e in entries), len(entries),
            None if last is None else int(last.timestamp() * 1000))
