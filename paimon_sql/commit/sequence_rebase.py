"""Moving a primary-key write's sequence numbers above a concurrent writer's.

Two writers that start from the same snapshot continue the bucket's sequence numbers from the same
point, so a key both wrote would carry one sequence number twice and the winner would depend on
how a reader happens to order the files. Paimon resolves a key by sequence number; so when the
commit finds that another commit reached our numbers first, it rewrites our (small, level-0) files
with every number shifted above the bucket's highest: the last committer wins, in every reader and
every compaction alike. Only the files of a write that actually met a concurrent one are rewritten.
"""

from __future__ import annotations

from typing import List

import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data import binary_row
from paimon_sql.format.file_format import read_file
from paimon_sql.manifest.manifest_file import DataFileMeta
from paimon_sql.schema.table_schema import SEQUENCE_NUMBER
from paimon_sql.store.file_store import FileStore
from paimon_sql.write.file_writer import delete_data_files, write_files


def shift_sequences(table: FileStore, partition: bytes, bucket: int, files: List[DataFileMeta], shift: int,
                    prefix: str = "data-") -> List[DataFileMeta]:
    """``files`` rewritten as new files whose sequence numbers are ``shift`` higher; the old ones deleted."""
    part_types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    pvals = binary_row.from_bytes(partition, part_types)
    out: List[DataFileMeta] = []
    try:
        for f in files:
            path = table.paths.data_file_path(pvals, bucket, f.file_name, f.external_path)
            rows = read_file(table.io, path, f.file_name.rsplit(".", 1)[-1])
            i = rows.schema.get_field_index(SEQUENCE_NUMBER)
            rows = rows.set_column(i, rows.schema.field(i), pc.add(rows.column(i), pa.scalar(shift, pa.int64())))
            out += write_files(table, rows, pvals, bucket, f.level, f.file_source, prefix)
    except BaseException:
        delete_data_files(table, pvals, bucket, out)
        raise
    delete_data_files(table, pvals, bucket, files)
    return out
