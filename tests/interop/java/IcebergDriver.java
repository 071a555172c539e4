import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.TableWriteImpl;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowKind;

/**
 * Drives Java Paimon 2.0's Iceberg compatibility ({@code metadata.iceberg.storage}) for
 * tests/interop/test_iceberg_interop.py: Java's IcebergCommitCallback writes the Iceberg metadata
 * of each commit, which the test compares with ours and reads with pyiceberg.
 *
 * <p>The table is (id BIGINT, name STRING, dt STRING) partitioned by dt; with {"pk": true} its
 * primary key is (id, dt), bucket 1.
 *
 * <pre>
 * {"op": "create", "table": T, "pk": bool, "options": {...}}  creates db and table -> "ok"
 * {"op": "write", "table": T, "rows": [[id, name, dt], ...]}   one batch commit -> "ok"
 * {"op": "delete", "table": T, "rows": [[id, name, dt], ...]}  -D rows of a primary-key table, one commit -> "ok"
 * {"op": "compact", "table": T}        full compaction of every partition's bucket 0, one commit -> "ok"
 * {"op": "read", "table": T}           -> [[id, name, dt], ...]
 * {"op": "tag", "table": T, "tag": name, "snapshot": id}  createTag (with the table's tag callbacks) -> "ok"
 * {"op": "delete_tag", "table": T, "tag": name}             deleteTag (with the table's tag callbacks) -> "ok"
 * </pre>
 */
public class IcebergDriver {

    public static void main(String[] args) throws Exception {
        DriverSupport.serveOnWarehouse(args, IcebergDriver::run);
    }

    private static Object run(Catalog catalog, JsonNode cmd) throws Exception {
        Identifier id = Identifier.fromString(cmd.get("table").asText());
        switch (cmd.get("op").asText()) {
            case "create": {
                catalog.createDatabase(id.getDatabaseName(), true);
                Schema.Builder schema = Schema.newBuilder()
                        .column("id", DataTypes.BIGINT())
                        .column("name", DataTypes.STRING())
                        .column("dt", DataTypes.STRING())
                        .partitionKeys("dt");
                Map<String, String> options = cmd.path("pk").asBoolean()
                        ? DriverSupport.tableOptions(cmd, "bucket", "1")
                        : DriverSupport.tableOptions(cmd);
                if (cmd.path("pk").asBoolean()) {
                    schema.primaryKey("id", "dt");
                }
                catalog.createTable(id, schema.options(options).build(), false);
                return "ok";
            }
            case "write":
                return write(catalog, id, cmd, RowKind.INSERT);
            case "delete":
                return write(catalog, id, cmd, RowKind.DELETE);
            case "compact": {
                FileStoreTable table = (FileStoreTable) catalog.getTable(id);
                BatchWriteBuilder builder = table.newBatchWriteBuilder();
                try (BatchTableWrite write = withDisk(builder.newWrite()); BatchTableCommit commit = builder.newCommit()) {
                    for (BinaryRow partition : table.newSnapshotReader().partitions()) {
                        ((TableWriteImpl<?>) write).compact(partition, 0, true);
                    }
                    commit.commit(write.prepareCommit());
                }
                return "ok";
            }
            case "read":
                return DriverSupport.rows(catalog.getTable(id));
            case "tag":
                ((FileStoreTable) catalog.getTable(id)).createTag(cmd.get("tag").asText(),
                        cmd.get("snapshot").asLong());
                return "ok";
            case "delete_tag":
                ((FileStoreTable) catalog.getTable(id)).deleteTag(cmd.get("tag").asText());
                return "ok";
            default:
                throw new IllegalArgumentException("unknown op " + cmd.get("op").asText());
        }
    }

    private static String write(Catalog catalog, Identifier id, JsonNode cmd, RowKind kind) throws Exception {
        BatchWriteBuilder builder = catalog.getTable(id).newBatchWriteBuilder();
        try (BatchTableWrite write = withDisk(builder.newWrite()); BatchTableCommit commit = builder.newCommit()) {
            for (JsonNode r : cmd.get("rows")) {
                write.write(GenericRow.ofKind(kind, r.get(0).asLong(), BinaryString.fromString(r.get(1).asText()),
                        BinaryString.fromString(r.get(2).asText())));
            }
            commit.commit(write.prepareCommit());
        }
        return "ok";
    }

    /** A write with a temp-disk IOManager: deletion vectors' lookup compaction needs one. */
    private static BatchTableWrite withDisk(BatchTableWrite write) {
        write.withIOManager(IOManager.create(System.getProperty("java.io.tmpdir")));
        return write;
    }
}
