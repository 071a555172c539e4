import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.hive.HiveCatalog;
import org.apache.paimon.hive.HiveCatalogLock;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.DataTypes;

import org.apache.hadoop.hive.conf.HiveConf;

/**
 * Drives Java Paimon's HiveCatalog for tests/interop/test_hive_catalog_interop.py.
 *
 * <p>Usage: {@code java HiveCatalogDriver <batch.json> | -} (DriverSupport.serve): a batch is
 * {"uri": metastore, "warehouse": W, "commands": [...]}, run on one HiveCatalog, one JSON line per command:
 *
 * <pre>
 * {"op": "list"}                -> {database: [tables]}
 * {"op": "read", "table": T}    -> [[id, dt], ...] of a table (id INT, dt STRING), sorted by id
 * {"op": "create", "table": T}  -> "ok": creates (id INT, dt STRING) PARTITIONED BY (dt) with
 *                  'metastore.partitioned-table' = 'true' and 'hive.owner-team' = 'bi', comment 'orders',
 *                  then writes (1, 'a'), (2, 'b')
 * {"op": "hold_lock", "table": T, "timeout_ms": M, "seconds": S | "until_released": true}
 *                  -> holds the table's HiveCatalogLock (waiting at most M ms for it) for S seconds or
 *                  until the next line on stdin: prints "held" once it holds it, then "ok";
 *                  {"error": ...} when it could not get it
 * </pre>
 */
public class HiveCatalogDriver {
    public static void main(String[] args) throws Exception {
        DriverSupport.serve(args, HiveCatalogDriver::batch);
    }

    private static void batch(JsonNode input) throws Exception {
        Map<String, String> options = new HashMap<>();
        options.put("metastore", "hive");
        options.put("uri", input.get("uri").asText());
        options.put("warehouse", input.get("warehouse").asText());
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(Options.fromMap(options)))) {
            for (JsonNode cmd : input.get("commands")) {
                DriverSupport.answer(() -> run(catalog, options, cmd));
            }
        }
    }

    private static Object run(Catalog catalog, Map<String, String> options, JsonNode cmd) throws Exception {
        String op = cmd.get("op").asText();
        switch (op) {
            case "list":
                Map<String, List<String>> out = new HashMap<>();
                for (String db : catalog.listDatabases()) {
                    out.put(db, catalog.listTables(db));
                }
                return out;
            case "read":
                return read(catalog.getTable(Identifier.fromString(cmd.get("table").asText())));
            case "create":
                create(catalog, Identifier.fromString(cmd.get("table").asText()));
                return "ok";
            case "hold_lock":
                return holdLock(options, Identifier.fromString(cmd.get("table").asText()), cmd);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static Object holdLock(Map<String, String> options, Identifier id, JsonNode cmd) {
        long timeoutMs = cmd.get("timeout_ms").asLong();
        Options opts = Options.fromMap(options);
        HiveConf conf = HiveCatalog.createHiveConf(CatalogContext.create(opts));
        HiveCatalogLock lock = new HiveCatalogLock(
                HiveCatalogLock.createClients(conf, opts, "org.apache.hadoop.hive.metastore.HiveMetaStoreClient"),
                100, timeoutMs);
        try {
            return lock.runWithLock(id.getDatabaseName(), id.getTableName(), () -> {
                System.out.println("\"held\"");
                System.out.flush();
                if (cmd.path("until_released").asBoolean()) {
                    DriverSupport.awaitRelease();
                } else {
                    Thread.sleep(cmd.get("seconds").asLong() * 1000);
                }
                return "ok";
            });
        } catch (Exception e) {
            Map<String, String> error = new HashMap<>();
            error.put("error", String.valueOf(e.getMessage()));
            return error;
        }
    }

    private static List<List<Object>> read(Table table) throws Exception {
        ReadBuilder rb = table.newReadBuilder();
        List<List<Object>> rows = new ArrayList<>();
        try (RecordReader<InternalRow> reader = rb.newRead().createReader(rb.newScan().plan())) {
            reader.forEachRemaining(r -> {
                List<Object> row = new ArrayList<>();
                row.add(r.getInt(0));
                row.add(r.getString(1).toString());
                rows.add(row);
            });
        }
        rows.sort((x, y) -> Integer.compare((Integer) x.get(0), (Integer) y.get(0)));
        return rows;
    }

    private static void create(Catalog catalog, Identifier id) throws Exception {
        catalog.createDatabase(id.getDatabaseName(), true);
        Schema schema = Schema.newBuilder()
                .column("id", DataTypes.INT())
                .column("dt", DataTypes.STRING())
                .partitionKeys("dt")
                .option("metastore.partitioned-table", "true")
                .option("hive.owner-team", "bi")
                .comment("orders")
                .build();
        catalog.createTable(id, schema, false);
        BatchWriteBuilder builder = catalog.getTable(id).newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
            write.write(GenericRow.of(1, BinaryString.fromString("a")));
            write.write(GenericRow.of(2, BinaryString.fromString("b")));
            commit.commit(write.prepareCommit());
        }
    }
}
