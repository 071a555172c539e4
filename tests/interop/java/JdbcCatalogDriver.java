import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.DelegateCatalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.jdbc.JdbcCatalog;
import org.apache.paimon.jdbc.JdbcCatalogLock;
import org.apache.paimon.options.Options;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.DataTypeRoot;

/**
 * Drives Java Paimon's JdbcCatalog for tests/interop/test_jdbc_catalog_interop.py.
 *
 * <p>Usage: {@code java JdbcCatalogDriver <commands.json> | -} (DriverSupport.serve): a batch is
 * {"catalog": {catalog options}, "commands": [...]}, run in order on one catalog, one JSON line printed per
 * command ({"error": ...} when it failed). Columns are
 * BIGINT, INT or STRING.
 *
 * <pre>
 * {"op": "databases"}                                         -> [names]
 * {"op": "tables", "database": D}                             -> [names]
 * {"op": "properties", "database": D}                         -> {key: value}
 * {"op": "create_database", "database": D, "properties": {}}  -> "ok"
 * {"op": "create_table", "table": "db.t", "fields": [[name, type], ...], "primary_keys": [...]} -> "ok"
 * {"op": "write", "table": T, "rows": [[v, ...], ...]}        -> "ok"
 * {"op": "read", "table": T}                                  -> [[v, ...], ...]
 * {"op": "rename", "table": T, "to": U} / {"op": "drop", "table": T} -> "ok"
 * {"op": "hold_lock", "table": T, "seconds": S, "timeout_ms": M}  holds the table's JdbcCatalogLock (waiting
 *     at most M ms for it, default 60 s) for S seconds; prints {"held": true} once it holds it, then "ok"
 *     ("until_released": true instead of seconds: until the next line on stdin)
 * </pre>
 */
public class JdbcCatalogDriver {
    public static void main(String[] args) throws Exception {
        DriverSupport.serve(args, JdbcCatalogDriver::batch);
    }

    private static void batch(JsonNode input) throws Exception {
        Map<String, String> options = new HashMap<>();
        input.get("catalog").fields().forEachRemaining(e -> options.put(e.getKey(), e.getValue().asText()));
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(Options.fromMap(options)))) {
            for (JsonNode cmd : input.get("commands")) {
                DriverSupport.answer(() -> run(catalog, options, cmd));
            }
        }
    }

    private static Object run(Catalog catalog, Map<String, String> options, JsonNode cmd) throws Exception {
        String op = cmd.get("op").asText();
        switch (op) {
            case "databases": return catalog.listDatabases();
            case "tables": return catalog.listTables(cmd.get("database").asText());
            case "properties": return databaseProperties(catalog, cmd.get("database").asText());
            case "create_database": {
                Map<String, String> props = new HashMap<>();
                if (cmd.has("properties")) {
                    cmd.get("properties").fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
                }
                catalog.createDatabase(cmd.get("database").asText(), false, props);
                return "ok";
            }
            default: break;
        }
        Identifier id = Identifier.fromString(cmd.get("table").asText());
        switch (op) {
            case "create_table": {
                Schema.Builder schema = Schema.newBuilder();
                for (JsonNode f : cmd.get("fields")) {
                    schema.column(f.get(0).asText(), DataTypeJsonParser.parseDataType(f.get(1)));
                }
                List<String> keys = new ArrayList<>();
                if (cmd.has("primary_keys")) {
                    cmd.get("primary_keys").forEach(k -> keys.add(k.asText()));
                }
                schema.primaryKey(keys);
                if (!keys.isEmpty()) {
                    schema.option("bucket", "1");
                }
                catalog.createTable(id, schema.build(), false);
                return "ok";
            }
            case "rename": catalog.renameTable(id, Identifier.fromString(cmd.get("to").asText()), false); return "ok";
            case "drop": catalog.dropTable(id, false); return "ok";
            case "write": return write(catalog.getTable(id), cmd.get("rows"));
            case "read": return DriverSupport.rows(catalog.getTable(id));
            case "hold_lock": {
                Catalog jdbc = catalog instanceof DelegateCatalog ? ((DelegateCatalog) catalog).wrapped() : catalog;
                JdbcCatalogLock lock = new JdbcCatalogLock(((JdbcCatalog) jdbc).getConnections(),
                        options.getOrDefault("catalog-key", "jdbc"), 200,
                        cmd.has("timeout_ms") ? cmd.get("timeout_ms").asLong() : 60_000);
                return lock.runWithLock(id.getDatabaseName(), id.getObjectName(), () -> {
                    System.out.println("{\"held\": true}");
                    System.out.flush();
                    if (cmd.path("until_released").asBoolean()) {
                        DriverSupport.awaitRelease();
                    } else {
                        Thread.sleep(cmd.get("seconds").asLong() * 1000);
                    }
                    return "ok";
                });
            }
            default: throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static String write(Table table, JsonNode rows) throws Exception {
        List<DataField> fields = table.rowType().getFields();
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
            for (JsonNode row : rows) {
                GenericRow out = new GenericRow(fields.size());
                for (int i = 0; i < fields.size(); i++) {
                    DataTypeRoot root = fields.get(i).type().getTypeRoot();
                    JsonNode v = row.get(i);
                    out.setField(i, v.isNull() ? null : root == DataTypeRoot.BIGINT ? (Object) v.asLong()
                            : root == DataTypeRoot.INTEGER ? (Object) v.asInt() : BinaryString.fromString(v.asText()));
                }
                write.write(out);
            }
            commit.commit(write.prepareCommit());
        }
        return "ok";
    }

    /** A database's properties: Catalog.loadDatabaseProperties in Java Paimon 1.0, getDatabase(name).options()
     * in 2.0 (this driver compiles against both, tests/oracles/paimon_java.py). */
    @SuppressWarnings("unchecked")
    private static Map<String, String> databaseProperties(Catalog catalog, String database) throws Exception {
        try {
            try {
                return (Map<String, String>) Catalog.class.getMethod("loadDatabaseProperties", String.class)
                        .invoke(catalog, database);
            } catch (NoSuchMethodException e) {
                Object db = Catalog.class.getMethod("getDatabase", String.class).invoke(catalog, database);
                return (Map<String, String>) Class.forName("org.apache.paimon.catalog.Database")
                        .getMethod("options").invoke(db);
            }
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
    }
}
