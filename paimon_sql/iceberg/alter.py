"""Iceberg metadata turned on, changed or off for a table that already has data (ALTER TABLE ...
SET / UNSET TBLPROPERTIES on ``metadata.iceberg.*``).

Java 2.0 writes nothing until the next commit, and has no procedure for it; paimon-sql writes the
metadata of the current snapshot as part of the ALTER, so Iceberg readers see the table at once
(afresh, as the first commit would, or extending what an earlier period of the option left).
A table whose metadata would be wrong (deletion vectors of format version 2, ...) is refused before the
option is stored, and so is one holding a data file without Parquet field ids, nested fields' ids
included (written by another or an older writer), as Iceberg readers find columns by id. With
``hive-catalog`` storage the current metadata is registered again at once (another metastore,
database or name may be set), and with ``rest-catalog`` committed to the REST catalog again.
Turning it off (UNSET, or ``disabled``) stops the metadata and, as in Java, leaves what was written
(the files, a metastore registration) describing the last snapshot published.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from paimon_sql.data import binary_row
from paimon_sql.exceptions import PaimonError, UnservedFeatureError
from paimon_sql.iceberg.commit_callback import check_publishable, publish_now
from paimon_sql.iceberg.paths import IcebergPaths, metadata_dir
from paimon_sql.iceberg.publisher import commit_to_catalog
from paimon_sql.io.paths import MAIN_BRANCH
from paimon_sql.options.iceberg_options import PREFIX, iceberg_options
from paimon_sql.read.scan import ScanStore
from paimon_sql.schema.schema_change import RemoveOption, SchemaChange, SetOption, apply

if TYPE_CHECKING:
    from paimon_sql.schema.table_schema import TableSchema


def commit_changes(table: ScanStore, changes: Sequence[SchemaChange]) -> TableSchema:
    """Commit ``changes`` to the table's schema; when they touch ``metadata.iceberg.*``, checked
    before and published after."""
    if not any(isinstance(c, (SetOption, RemoveOption)) and c.key.startswith(PREFIX) for c in changes):
        return table.schema_manager.commit_changes(changes)
    changed = table.with_schema(apply(table.schema_manager.latest(), changes))
    check_publishable(changed)
    before, after = iceberg_options(table.schema.options), iceberg_options(changed.schema.options)
    if after is not None and (before is None or (before.storage, before.location) != (after.storage, after.location)) \
            and changed.options.file_format == "parquet":  # else the name mapping finds columns (name_mapping.py)
        _check_field_ids(changed)
    schema = table.schema_manager.commit_changes(changes)
    try:
        published = table.with_schema(schema)
        publish_now(published)
        _register(published)
    except (PaimonError, OSError) as e:
        raise PaimonError(f"table {table.name}: the options are set, but writing the Iceberg metadata of the "
                          f"current snapshot failed (the next commit writes it): {e}") from None
    return schema


def _register(table: ScanStore) -> None:
    """With ``hive-catalog`` or ``rest-catalog`` storage, the current metadata registered again: the
    catalog options may have changed (another metastore or REST catalog, database or name), or an
    earlier registration failed."""
    options, latest = iceberg_options(table.schema.options), table.snapshot_manager.latest_id()
    if options is None or latest is None or table.branch != MAIN_BRANCH:
        return
    path = IcebergPaths(metadata_dir(table, options)).metadata(latest)
    if not table.io.exists(path):
        return
    commit_to_catalog(table, options, path, None)


def _check_field_ids(table: ScanStore) -> None:
    """Iceberg readers find a data file's columns by their Parquet field ids, which Paimon's writers
    store; a file written without them (by an older or another writer) is refused, naming it."""
    part_types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    names = set(table.schema.field_names)
    for e in table.new_scan().plan_entries():
        path = table.paths.data_file_path(binary_row.from_bytes(e.partition, part_types), e.bucket,
                                          e.file.file_name, e.file.external_path)
        with table.io.fs.open_input_file(table.io.arrow_path(path)) as f:
            columns = pq.ParquetFile(f).schema_arrow
        if any(c.name in names and not _has_ids(c) for c in columns):
            raise UnservedFeatureError(f"table {table.name}: data file {path} has no Parquet field ids, by which "
                                       "Iceberg readers find its columns: Iceberg metadata is not turned on (rewrite "
                                       "the table first, e.g. INSERT OVERWRITE it with its own rows)")


def _has_ids(f: pa.Field) -> bool:
    """Whether ``f`` and every field nested in it (list element, map key and value, struct field) has an id."""
    t = f.type
    if pa.types.is_map(t):
        nested = [t.key_field, t.item_field]
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        nested = [t.value_field]
    else:
        nested = list(t) if pa.types.is_struct(t) else []
    return b"PARQUET:field_id" in (f.metadata or {}) and all(map(_has_ids, nested))
