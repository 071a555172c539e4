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
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
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
 * <p>Usage: {@code java HiveCatalogDriver <uri> <warehouse> <op> [table]}, one JSON line printed:
 *
 * <pre>
 * list          -> {database: [tables]}
 * read db.t     -> [[id, dt], ...] of a table (id INT, dt STRING), sorted by id
 * create db.t   -> "ok": creates (id INT, dt STRING) PARTITIONED BY (dt) with
 *                  'metastore.partitioned-table' = 'true' and 'hive.owner-team' = 'bi', comment 'orders',
 *                  then writes (1, 'a'), (2, 'b')
 * hold_lock db.t S M -> holds the table's HiveCatalogLock (waiting at most M ms for it) for S seconds:
 *                  prints "held" once it holds it, then "ok"; {"error": ...} when it could not get it
 * </pre>
 */
public class HiveCatalogDriver {
    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        options.put("metastore", "hive");
        options.put("uri", args[0]);
        options.put("warehouse", args[1]);
        Object result;
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(Options.fromMap(options)))) {
            switch (args[2]) {
                case "list":
                    Map<String, List<String>> out = new HashMap<>();
                    for (String db : catalog.listDatabases()) {
                        out.put(db, catalog.listTables(db));
                    }
                    result = out;
                    break;
                case "read":
                    result = read(catalog.getTable(Identifier.fromString(args[3])));
                    break;
                case "create":
                    create(catalog, Identifier.fromString(args[3]));
                    result = "ok";
                    break;
                case "hold_lock":
                    result = holdLock(options, Identifier.fromString(args[3]), Long.parseLong(args[4]),
                            Long.parseLong(args[5]));
                    break;
                default:
                    throw new IllegalArgumentException("unknown op " + args[2]);
            }
        }
        System.out.println(new ObjectMapper().writeValueAsString(result));
    }

    private static Object holdLock(Map<String, String> options, Identifier id, long seconds, long timeoutMs) {
        Options opts = Options.fromMap(options);
        HiveConf conf = HiveCatalog.createHiveConf(CatalogContext.create(opts));
        HiveCatalogLock lock = new HiveCatalogLock(
                HiveCatalogLock.createClients(conf, opts, "org.apache.hadoop.hive.metastore.HiveMetaStoreClient"),
                100, timeoutMs);
        try {
            return lock.runWithLock(id.getDatabaseName(), id.getTableName(), () -> {
                System.out.println("\"held\"");
                System.out.flush();
                Thread.sleep(seconds * 1000);
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
