"""``t$file_indexes``: the file indexes (bloom filter, bitmap, BSI) of each live data file, one row
per indexed column and index type, embedded in the manifest or in a ``<data file>.index`` file."""

from paimon_sql.index.file_index import INDEX_SUFFIX
from paimon_sql.index.file_index_format import read_header
from paimon_sql.systables.base import SnapshotMetadataTable, columns, register


@register
class FileIndexesTable(SnapshotMetadataTable):
    name = "file_indexes"
    FIELDS = columns("partition STRING", "bucket INT NOT NULL", "file_path STRING NOT NULL",
                     "file_size_in_bytes BIGINT NOT NULL", "record_count BIGINT NOT NULL",
                     "schema_id BIGINT NOT NULL", "column_name STRING NOT NULL", "index_type STRING NOT NULL",
                     "storage_type STRING NOT NULL", "index_file_path STRING", "index_size_in_bytes BIGINT NOT NULL",
                     "index_container_size_in_bytes BIGINT NOT NULL", "is_empty BOOLEAN NOT NULL")
    pushdown = frozenset({"partition", "bucket"})

    def rows(self, predicate=None):
        out = []
        for e, part, bucket_dir in self.live_entries(predicate):
            f = e.file
            containers = [("EMBEDDED", None, f.embedded_index)] if f.embedded_index else []
            containers += [("FILE", f"{bucket_dir}/{x}", self.table.io.read_bytes(f"{bucket_dir}/{x}"))
                           for x in f.extra_files if x.endswith(INDEX_SUFFIX)]
            for storage, path, blob in containers:
                for column, kinds in read_header(blob, path or f"embedded in {f.file_name}").items():
                    for kind, (_, length) in kinds.items():
                        out.append({"partition": part, "bucket": e.bucket, "file_path": f"{bucket_dir}/{f.file_name}",
                                    "file_size_in_bytes": f.file_size, "record_count": f.row_count,
                                    "schema_id": f.schema_id, "column_name": column, "index_type": kind,
                                    "storage_type": storage, "index_file_path": path, "index_size_in_bytes": length,
                                    "index_container_size_in_bytes": len(blob), "is_empty": length == 0})
        return self.from_rows(out)
