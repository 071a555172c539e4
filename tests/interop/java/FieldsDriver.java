import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.stats.Statistics;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.utils.JsonSerdeUtil;

/**
 * Drives Java Paimon 2.0's side of tests/interop/test_fields_interop.py: metadata fields only a 2.0 writer
 * produces (data files at external paths, column default values, a snapshot's uuid, statistics committed by
 * BatchTableCommit.updateStatistics, as paimon-spark's ANALYZE does). Several of these APIs are not in
 * Paimon 1.0: this driver compiles against 2.0 only.
 *
 * <p>The table is (id BIGINT, name STRING, dt STRING) partitioned by dt, an append table with bucket -1.
 *
 * <p>Usage: {@code java FieldsDriver <commands.json> | -} (DriverSupport.serve): a batch is
 * {"warehouse": W, "commands": [...]}, run in order on one filesystem catalog.
 *
 * <pre>
 * {"op": "create", "table": T, "options": {...}, "defaults": {column: SQL literal}}  -> "ok"
 * {"op": "write", "table": T, "rows": [[id, name | null, dt], ...]}  one batch commit -> "ok"
 * {"op": "read", "table": T}        -> rows sorted by id
 * {"op": "files", "table": T}       -> [[file name, external path | null, embedded index bytes | null,
 *                                        value stats cols | null], ...]
 * {"op": "analyze", "table": T, "statistics": JSON text}  Statistics.fromJson, committed -> "ok"
 * {"op": "snapshot", "table": T}    -> the latest snapshot: [id, uuid, operation, commitKind, statistics]
 * {"op": "schema", "table": T}      -> the latest schema as Java writes it (JSON text)
 * {"op": "add_column", "table": T, "name": C}  a STRING column -> "ok"
 * </pre>
 */
public class FieldsDriver {

    public static void main(String[] args) throws Exception {
        DriverSupport.serveOnWarehouse(args, FieldsDriver::run);
    }

    private static Object run(Catalog catalog, JsonNode cmd) throws Exception {
        Identifier id = Identifier.fromString(cmd.get("table").asText());
        switch (cmd.get("op").asText()) {
            case "create": {
                catalog.createDatabase(id.getDatabaseName(), true);
                Map<String, String> opts = DriverSupport.tableOptions(cmd);
                JsonNode defaults = cmd.has("defaults") ? cmd.get("defaults") : null;
                Schema.Builder schema = Schema.newBuilder();
                for (String column : Arrays.asList("id", "name", "dt")) {
                    String dflt = defaults != null && defaults.has(column) ? defaults.get(column).asText() : null;
                    schema.column(column, column.equals("id") ? DataTypes.BIGINT() : DataTypes.STRING(), null, dflt);
                }
                catalog.createTable(id, schema.partitionKeys("dt").options(opts).build(), false);
                return "ok";
            }
            case "write": {
                BatchWriteBuilder builder = catalog.getTable(id).newBatchWriteBuilder();
                try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
                    for (JsonNode r : cmd.get("rows")) {
                        write.write(GenericRow.of(r.get(0).asLong(),
                                r.get(1).isNull() ? null : BinaryString.fromString(r.get(1).asText()),
                                BinaryString.fromString(r.get(2).asText())));
                    }
                    commit.commit(write.prepareCommit());
                }
                return "ok";
            }
            case "read": {
                List<List<Object>> rows = DriverSupport.rows(catalog.getTable(id));
                rows.sort((a, b) -> Long.compare((Long) a.get(0), (Long) b.get(0)));
                return rows;
            }
            case "files": {
                List<List<Object>> out = new ArrayList<>();
                FileStoreTable table = (FileStoreTable) catalog.getTable(id);
                for (ManifestEntry e : table.store().newScan().plan().files()) {
                    DataFileMeta f = e.file();
                    out.add(Arrays.asList(f.fileName(), f.externalPath().orElse(null),
                            f.embeddedIndex() == null ? null : f.embeddedIndex().length, f.valueStatsCols()));
                }
                return out;
            }
            case "analyze": {
                FileStoreTable table = (FileStoreTable) catalog.getTable(id);
                try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
                    commit.updateStatistics(Statistics.fromJson(cmd.get("statistics").asText()));
                }
                return "ok";
            }
            case "snapshot": {
                Snapshot s = ((FileStoreTable) catalog.getTable(id)).snapshotManager().latestSnapshot();
                return Arrays.asList(s.id(), s.uuid(), s.operation() == null ? null : s.operation().name(),
                        s.commitKind().name(), s.statistics());
            }
            case "schema":
                return JsonSerdeUtil.toJson(((FileStoreTable) catalog.getTable(id)).schema());
            case "add_column":
                catalog.alterTable(id, SchemaChange.addColumn(cmd.get("name").asText(), DataTypes.STRING()), false);
                return "ok";
            default:
                throw new IllegalArgumentException("unknown op " + cmd.get("op").asText());
        }
    }
}
