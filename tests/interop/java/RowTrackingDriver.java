import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.append.AppendCompactCoordinator;
import org.apache.paimon.append.AppendCompactTask;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.operation.BaseAppendFileStoreWrite;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.Snapshot;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.SpecialFields;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.utils.RecordWriter;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowType;

/**
 * Drives Java Paimon 2.0's side of row tracking ({@code row-tracking.enabled}) for
 * tests/interop/test_row_tracking_interop.py. Row tracking does not exist in Paimon 1.0: this driver compiles
 * against 2.0 only.
 *
 * <p>The table is (id BIGINT, name STRING, dt STRING) partitioned by dt, an append table with bucket -1. Reads
 * ask for the row-tracking columns as paimon-spark does ({@code SpecialFields.rowTypeWithRowTracking}); compaction
 * is paimon-spark's CompactProcedure for such a table: AppendCompactCoordinator's tasks, each done by a write
 * whose write type carries _ROW_ID and _SEQUENCE_NUMBER, one commit.
 *
 * <p>Usage: {@code java RowTrackingDriver <commands.json> | -} (DriverSupport.serve): a batch is
 * {"warehouse": W, "commands": [...]}, run in order on one filesystem catalog.
 *
 * <pre>
 * {"op": "create", "table": T, "options": {...}}   creates db and table (row-tracking.enabled added) -> "ok"
 * {"op": "write", "table": T, "rows": [[id, name, dt], ...]}  one batch commit -> "ok"
 * {"op": "compact", "table": T}                   -> number of compaction tasks committed
 * {"op": "read", "table": T, "snapshot": N?}      -> [[id, name, dt, _ROW_ID, _SEQUENCE_NUMBER], ...]
 * {"op": "files", "table": T}                     -> [[first_row_id, row_count, min_seq, max_seq, source, write_cols]]
 * {"op": "next_row_id", "table": T}               -> the latest snapshot's nextRowId
 * {"op": "update", "table": T, "column": C, "rows": [[row_id, value], ...]}  a data-evolution column update
 *                                                   (paimon-spark's way) -> number of files written
 * </pre>
 */
public class RowTrackingDriver {

    public static void main(String[] args) throws Exception {
        DriverSupport.serveOnWarehouse(args, RowTrackingDriver::run);
    }

    private static Object run(Catalog catalog, JsonNode cmd) throws Exception {
        Identifier id = Identifier.fromString(cmd.get("table").asText());
        switch (cmd.get("op").asText()) {
            case "create": {
                catalog.createDatabase(id.getDatabaseName(), true);
                Map<String, String> opts = DriverSupport.tableOptions(cmd, "row-tracking.enabled", "true");
                Schema schema = Schema.newBuilder()
                        .column("id", DataTypes.BIGINT())
                        .column("name", DataTypes.STRING())
                        .column("dt", DataTypes.STRING())
                        .partitionKeys("dt")
                        .options(opts)
                        .build();
                catalog.createTable(id, schema, false);
                return "ok";
            }
            case "write": {
                BatchWriteBuilder builder = catalog.getTable(id).newBatchWriteBuilder();
                try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
                    for (JsonNode r : cmd.get("rows")) {
                        write.write(GenericRow.of(r.get(0).asLong(), BinaryString.fromString(r.get(1).asText()),
                                BinaryString.fromString(r.get(2).asText())));
                    }
                    commit.commit(write.prepareCommit());
                }
                return "ok";
            }
            case "compact":
                return compact((FileStoreTable) catalog.getTable(id));
            case "update":
                return update((FileStoreTable) catalog.getTable(id), cmd);
            case "read": {
                Table table = catalog.getTable(id);
                if (cmd.has("snapshot")) {
                    table = table.copy(Collections.singletonMap("scan.snapshot-id", cmd.get("snapshot").asText()));
                }
                return read(table);
            }
            case "files": {
                List<List<Object>> out = new ArrayList<>();
                FileStoreTable table = (FileStoreTable) catalog.getTable(id);
                for (ManifestEntry e : table.store().newScan().plan().files()) {
                    DataFileMeta f = e.file();
                    out.add(java.util.Arrays.asList(f.firstRowId(), f.rowCount(), f.minSequenceNumber(),
                            f.maxSequenceNumber(), f.fileSource().map(Object::toString).orElse(null), f.writeCols()));
                }
                return out;
            }
            case "next_row_id": {
                Snapshot latest = ((FileStoreTable) catalog.getTable(id)).snapshotManager().latestSnapshot();
                return latest.nextRowId();
            }
            default:
                throw new IllegalArgumentException("unknown op " + cmd.get("op").asText());
        }
    }

    /** As paimon-spark's CompactProcedure compacts an unaware-bucket row-tracking table. */
    private static int compact(FileStoreTable table) throws Exception {
        List<AppendCompactTask> tasks = new AppendCompactCoordinator(table, false).run();
        String user = "row-tracking-driver";
        BaseAppendFileStoreWrite write = (BaseAppendFileStoreWrite) table.store().newWrite(user);
        write.withWriteType(SpecialFields.rowTypeWithRowTracking(table.rowType()));
        List<CommitMessage> messages = new ArrayList<>();
        try {
            for (AppendCompactTask task : tasks) {
                messages.add(task.doCompact(table, write));
            }
        } finally {
            write.close();
        }
        try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
            commit.commit(messages);
        }
        return tasks.size();
    }

    /**
     * As paimon-spark 2.0's UPDATE of one column of a data-evolution table (DataEvolutionTableDataWrite):
     * for each file holding a row id to update, one file of that column alone over the file's whole row id
     * range (new values where given, current ones elsewhere) with the file's first row id; one commit.
     */
    private static int update(FileStoreTable table, JsonNode cmd) throws Exception {
        String column = cmd.get("column").asText();
        Map<Long, String> values = new HashMap<>();
        for (JsonNode r : cmd.get("rows")) {
            values.put(r.get(0).asLong(), r.get(1).asText());
        }
        RowType writeType = table.rowType().project(Collections.singletonList(column));
        Map<Long, String> current = new HashMap<>();
        ReadBuilder builder = table.newReadBuilder().withReadType(SpecialFields.rowTypeWithRowTracking(writeType));
        try (RecordReader<InternalRow> reader = builder.newRead().createReader(builder.newScan().plan())) {
            reader.forEachRemaining(row -> current.put(row.getLong(1), row.isNullAt(0) ? null : row.getString(0).toString()));
        }
        List<CommitMessage> messages = new ArrayList<>();
        BaseAppendFileStoreWrite write = (BaseAppendFileStoreWrite) table.store().newWrite("row-tracking-driver");
        write.withWriteType(writeType);
        try {
            for (ManifestEntry e : table.store().newScan().plan().files()) {
                DataFileMeta f = e.file();
                long first = f.firstRowId() == null ? -1 : f.firstRowId();
                if (f.writeCols() != null || first < 0
                        || values.keySet().stream().noneMatch(r -> r >= first && r < first + f.rowCount())) {
                    continue;
                }
                RecordWriter<InternalRow> writer = write.createWriter(e.partition(), 0);
                for (long r = first; r < first + f.rowCount(); r++) {
                    String v = values.containsKey(r) ? values.get(r) : current.get(r);
                    writer.write(GenericRow.of(v == null ? null : BinaryString.fromString(v)));
                }
                List<DataFileMeta> assigned = new ArrayList<>();
                for (DataFileMeta written : writer.prepareCommit(false).newFilesIncrement().newFiles()) {
                    assigned.add(written.assignFirstRowId(first));
                }
                writer.close();
                messages.add(new CommitMessageImpl(e.partition(), 0, null,
                        new DataIncrement(assigned, Collections.emptyList(), Collections.emptyList()),
                        CompactIncrement.emptyIncrement()));
            }
        } finally {
            write.close();
        }
        try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
            commit.commit(messages);
        }
        return messages.size();
    }

    /** Rows with _ROW_ID and _SEQUENCE_NUMBER, sorted by row id. */
    private static List<List<Object>> read(Table table) throws Exception {
        RowType type = SpecialFields.rowTypeWithRowTracking(table.rowType());
        ReadBuilder builder = table.newReadBuilder().withReadType(type);
        List<List<Object>> out = new ArrayList<>();
        try (RecordReader<InternalRow> reader = builder.newRead().createReader(builder.newScan().plan())) {
            reader.forEachRemaining(row -> out.add(java.util.Arrays.asList(
                    row.getLong(0), row.getString(1).toString(), row.getString(2).toString(),
                    row.getLong(3), row.getLong(4))));
        }
        out.sort((a, b) -> Long.compare((Long) a.get(3), (Long) b.get(3)));
        return out;
    }
}
