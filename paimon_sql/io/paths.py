"""Where every file of a table lives (Paimon's FileStorePathFactory).

``<table>/snapshot/snapshot-N``, ``<table>/schema/schema-N``, ``<table>/manifest/...``,
``<table>/[k=v/...]bucket-B/data-<uuid>-<n>.<format>``. Partition values become directory names
as Java Paimon names them (:mod:`partition_names`: ``d=19844`` by default, ``d=2024-05-01`` with
``partition.legacy-name`` false; NULL or blank → ``partition.default-name``), with Hive's escaping
of characters that cannot appear in a path segment. Names users give (tags,
branches, consumer ids) pass the path guard here, where their paths are built, so none of them
can reach outside the table.
"""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from decimal import Decimal
from typing import Any, Dict, List, Sequence, Tuple

from paimon_sql.data.partition_names import value_text
from paimon_sql.io.path_guard import check_segment

# Spark's (Hive's) escaped characters; Java Paimon's PartitionPathUtils also escapes '}' and NUL
SPARK_ESCAPED = frozenset('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(0x01, 0x20)}
PAIMON_ESCAPED = SPARK_ESCAPED | {"}", "\x00"}


def escape_path_name(text: str, escaped=SPARK_ESCAPED) -> str:
    return "".join(f"%{ord(c):02X}" if c in escaped else c for c in text)


def partition_value_text(v: Any) -> str:
    """A partition value as SQL statements show it (SHOW PARTITIONS, SHOW TABLE EXTENDED), which
    Spark prints whatever the table names its directories."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dt.datetime):
        return v.replace(tzinfo=None).isoformat(sep=" ")
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, Decimal):
        return format(v, "f")
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def shown_partition(keys: Sequence[str], values: Sequence[Any], default_name: str) -> str:
    """``k=v/...`` as SHOW PARTITIONS prints a partition: SQL's text of the values, escaped as a
    path, whatever the table's directories are named."""
    texts = (default_name if v is None or v == "" else partition_value_text(v) for v in values)
    return "/".join(f"{escape_path_name(k)}={escape_path_name(t)}" for k, t in zip(keys, texts))


MAIN_BRANCH = "main"
POSTPONE_BUCKET = -2  # bucket = -2: files a postpone writer left for compaction to assign (``bucket-postpone``)


def branch_path(table_root: str, branch: str) -> str:
    return f"{table_root}/branch/branch-{check_segment('branch', branch)}"


_NAMED_PARTITIONS = 100_000  # partition directory names a PathFactory keeps


class PathFactory:
    """Paths of one table directory as seen from one branch.

    A branch (``branch/branch-<name>/``) has its own snapshots, schemas, tags and consumers;
    manifests, index files and data files are shared with the main branch, under the table root.
    """

    def __init__(self, table_path: str, partition_keys: Sequence[str], file_format: str,
                 default_partition_name: str = "__DEFAULT_PARTITION__", branch: str = MAIN_BRANCH,
                 partition_types: Sequence[Any] = (), legacy_partition_name: bool = True):
        self.root = table_path.rstrip("/")
        self.branch = branch
        self.branch_root = self.root if branch == MAIN_BRANCH else branch_path(self.root, branch)
        self.partition_keys = list(partition_keys)
        self.partition_types = list(partition_types)
        self.legacy_partition_name = legacy_partition_name
        self.file_format = file_format
        self.default_partition_name = default_partition_name
        self._uuid = str(uuid.uuid4())
        self._counter = itertools.count()
        self._manifest_uuid = str(uuid.uuid4())
        self._manifest_counter = itertools.count()
        self._partition_dirs: Dict[tuple, str] = {}  # a table's few partitions, named once (every read names them)

    # -- metadata -------------------------------------------------------------------------

    @property
    def snapshot_dir(self) -> str:
        return f"{self.branch_root}/snapshot"

    def snapshot_path(self, snapshot_id: int) -> str:
        return f"{self.branch_root}/snapshot/snapshot-{snapshot_id}"

    @property
    def schema_dir(self) -> str:
        return f"{self.branch_root}/schema"

    def schema_path(self, schema_id: int) -> str:
        return f"{self.branch_root}/schema/schema-{schema_id}"

    @property
    def tag_dir(self) -> str:
        return f"{self.branch_root}/tag"

    def tag_path(self, name: str) -> str:
        return f"{self.branch_root}/tag/tag-{check_segment('tag', name)}"

    @property
    def consumer_dir(self) -> str:
        return f"{self.branch_root}/consumer"

    def consumer_path(self, consumer_id: str) -> str:
        return f"{self.branch_root}/consumer/consumer-{check_segment('consumer', consumer_id)}"

    def statistics_path(self, name: str) -> str:
        return f"{self.root}/statistics/{name}"

    @property
    def manifest_dir(self) -> str:
        return f"{self.root}/manifest"

    def manifest_path(self, name: str) -> str:
        return f"{self.root}/manifest/{name}"

    def new_manifest_name(self) -> str:
        return f"manifest-{self._manifest_uuid}-{next(self._manifest_counter)}"

    def new_manifest_list_name(self) -> str:
        return f"manifest-list-{self._manifest_uuid}-{next(self._manifest_counter)}"

    def new_index_manifest_name(self) -> str:
        return f"index-manifest-{self._manifest_uuid}-{next(self._manifest_counter)}"

    def new_index_file_name(self) -> str:
        """``index-<uuid>-<n>``: a HASH or DELETION_VECTORS index file."""
        return f"index-{self._uuid}-{next(self._counter)}"

    def index_path(self, name: str) -> str:
        return f"{self.root}/index/{name}"

    # -- data -----------------------------------------------------------------------------

    def partition_spec(self, values: Sequence[Any], legacy: bool = None) -> List[Tuple[str, str]]:
        """(key, text) per partition column, spelled as the table names its directories (or as
        ``legacy`` says: ``$partitions`` shows the cast spelling)."""
        legacy = self.legacy_partition_name if legacy is None else legacy
        return [(k, value_text(v, t, legacy) or self.default_partition_name)
                for k, t, v in zip(self.partition_keys, self.partition_types, values)]

    def partition_dir(self, values: Sequence[Any]) -> str:
        key = tuple(values)
        known = self._partition_dirs.get(key)
        if known is None:
            if len(self._partition_dirs) >= _NAMED_PARTITIONS:
                self._partition_dirs.clear()
            known = self._partition_dirs[key] = "/".join(
                f"{escape_path_name(k, PAIMON_ESCAPED)}={escape_path_name(text, PAIMON_ESCAPED)}"
                for k, text in self.partition_spec(values))
        return known

    def bucket_dir(self, partition_values: Sequence[Any], bucket: int) -> str:
        """``bucket-<n>``; the postpone bucket (-2) is ``bucket-postpone``, as Paimon names it."""
        part = self.partition_dir(partition_values)
        name = "postpone" if bucket == POSTPONE_BUCKET else bucket
        return f"{self.root}/{part}/bucket-{name}" if part else f"{self.root}/bucket-{name}"

    def new_data_file_name(self, prefix: str = "data-") -> str:
        return f"{prefix}{self._uuid}-{next(self._counter)}.{self.file_format}"

    def data_file_path(self, partition_values: List[Any], bucket: int, file_name: str,
                       external_path: str = None) -> str:
        return external_path or f"{self.bucket_dir(partition_values, bucket)}/{file_name}"
