import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.DelegateCatalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.options.Options;
import org.apache.paimon.partition.Partition;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.rest.RESTCatalog;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.TableSnapshot;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.RowKind;

/**
 * Java Paimon 2.0's RESTCatalog (metastore=rest, Paimon's public API only) driven line by line, for
 * tests/interop/test_java_rest_client.py through tests/oracles/paimon_rest_client.py.
 *
 * <p>Usage: {@code java RestCatalogClientDriver}: one JSON command a line on stdin, each answered by
 * one JSON line on stdout, {"result": R} or, when Java threw, {"error": "<SimpleClass>: message",
 * "causes": ["<SimpleClass>: message", ...]} (the exception's causes, outermost first), until stdin
 * closes. Every command names its catalog's options ({"catalog": {"uri": U, "warehouse": W,
 * "token.provider": "bear", "token": T, ...}}; metastore=rest is added); one RESTCatalog is kept per
 * distinct options. Tables are "db.t"; columns' types are Paimon's SQL type strings ("BIGINT NOT NULL");
 * values are JSON numbers, booleans or strings (INT, BIGINT, SMALLINT, TINYINT, BOOLEAN, FLOAT, DOUBLE,
 * STRING / VARCHAR / CHAR).
 *
 * <pre>
 * {"op": "databases"}                                   -> [names]
 * {"op": "create_database", "database": D}              -> null
 * {"op": "drop_database", "database": D, "cascade": B}  -> null
 * {"op": "tables", "database": D}                       -> [names]
 * {"op": "create_table", "table": T, "columns": [[name, type], ...], "primary_keys": [...],
 *     "partition_keys": [...], "options": {k: v}}       -> null
 * {"op": "schema", "table": T}                          -> {"columns": [[name, type], ...], "primary_keys": [...],
 *                                                           "options": {...}, "schema_id": N}
 * {"op": "write", "table": T, "rows": [[v, ...], ...], "kinds": ["+I" | "-D", ...]}  one BatchWriteBuilder commit
 *                                                       -> the latest snapshot id after it
 * {"op": "read", "table": T, "snapshot": N | "tag": G}  -> [[v, ...], ...] (in the reader's order)
 * {"op": "alter", "table": T, "changes": [{"add_column": C, "type": TYPE}, {"rename_column": C, "to": C2},
 *     {"drop_column": C}, {"set_option": K, "value": V}]} -> null
 * {"op": "snapshot", "table": T}                        -> the server's latest (loadSnapshot): {"id", "schema_id",
 *                                                          "commit_kind", "record_count"}, or null
 * {"op": "create_tag", "table": T, "tag": G, "snapshot": N, "via": "table" | "catalog"}  -> null
 *     (table: Table.createTag(G, N), N absent = the latest; catalog: RESTCatalog.createTag, the server's endpoint)
 * {"op": "tags", "table": T}                            -> {tag: snapshot id} (RESTCatalog.listTagsPaged, getTag)
 * {"op": "delete_tag", "table": T, "tag": G}            -> null
 * {"op": "rollback", "table": T, "snapshot": N | "tag": G}  -> null (Table.rollbackTo)
 * {"op": "partitions", "table": T}                      -> [{"spec": {k: v}, "record_count": N, "file_count": N}, ...]
 *                                                          (Catalog.listPartitions: what the server keeps)
 * {"op": "drop_table", "table": T}                      -> null
 * {"op": "rename_table", "table": T, "to": T2}          -> null
 * {"op": "create_branch", "table": T, "branch": B, "tag": G}  -> null (Table.createBranch, from tag G when given)
 * {"op": "branches", "table": T}                        -> [names] (Catalog.listBranches)
 * A branch's table is "db.t$branch_B" in any table command.
 * </pre>
 */
public class RestCatalogClientDriver {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, Catalog> CATALOGS = new HashMap<>();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.isBlank()) {
                    continue;
                }
                Map<String, Object> answer = new LinkedHashMap<>();
                try {
                    answer.put("result", run(JSON.readTree(line)));
                } catch (Throwable e) {
                    answer.put("error", describe(e));
                    List<String> causes = new ArrayList<>();
                    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
                        causes.add(describe(c));
                    }
                    answer.put("causes", causes);
                }
                System.out.println(JSON.writeValueAsString(answer));
                System.out.flush();
            }
        } finally {
            for (Catalog catalog : CATALOGS.values()) {
                catalog.close();
            }
        }
    }

    private static String describe(Throwable e) {
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    private static Catalog catalog(JsonNode cmd) {
        Map<String, String> options = new TreeMap<>();
        cmd.get("catalog").fields().forEachRemaining(e -> options.put(e.getKey(), e.getValue().asText()));
        options.put("metastore", "rest");
        return CATALOGS.computeIfAbsent(options.toString(),
                k -> CatalogFactory.createCatalog(CatalogContext.create(Options.fromMap(options))));
    }

    private static RESTCatalog rest(Catalog catalog) {
        while (catalog instanceof DelegateCatalog) {
            catalog = ((DelegateCatalog) catalog).wrapped();
        }
        return (RESTCatalog) catalog;
    }

    private static Object run(JsonNode cmd) throws Exception {
        Catalog catalog = catalog(cmd);
        String op = cmd.get("op").asText();
        switch (op) {
            case "databases": return catalog.listDatabases();
            case "create_database": catalog.createDatabase(cmd.get("database").asText(), false, new HashMap<>()); return null;
            case "drop_database":
                catalog.dropDatabase(cmd.get("database").asText(), false, cmd.path("cascade").asBoolean());
                return null;
            case "tables": return catalog.listTables(cmd.get("database").asText());
            default: break;
        }
        Identifier id = Identifier.fromString(cmd.get("table").asText());
        switch (op) {
            case "create_table": catalog.createTable(id, schema(cmd), false); return null;
            case "drop_table": catalog.dropTable(id, false); return null;
            case "create_branch": {
                Table table = catalog.getTable(id);
                if (cmd.has("tag")) {
                    table.createBranch(cmd.get("branch").asText(), cmd.get("tag").asText());
                } else {
                    table.createBranch(cmd.get("branch").asText());
                }
                return null;
            }
            case "branches": return catalog.listBranches(id);
            case "rename_table": catalog.renameTable(id, Identifier.fromString(cmd.get("to").asText()), false); return null;
            case "alter": catalog.alterTable(id, changes(cmd.get("changes")), false); return null;
            case "schema": return describeSchema(catalog.getTable(id));
            case "write": return write(catalog.getTable(id), cmd);
            case "read": return read(travel(catalog.getTable(id), cmd));
            case "snapshot": {
                Optional<TableSnapshot> latest = catalog.loadSnapshot(id);
                if (!latest.isPresent()) {
                    return null;
                }
                Snapshot s = latest.get().snapshot();
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("id", s.id());
                out.put("schema_id", s.schemaId());
                out.put("commit_kind", s.commitKind().name());
                out.put("record_count", latest.get().recordCount());
                return out;
            }
            case "create_tag": {
                String tag = cmd.get("tag").asText();
                Long snapshot = cmd.hasNonNull("snapshot") ? cmd.get("snapshot").asLong() : null;
                if (cmd.path("via").asText("table").equals("catalog")) {
                    rest(catalog).createTag(id, tag, snapshot, null, false);
                } else if (snapshot == null) {
                    catalog.getTable(id).createTag(tag);
                } else {
                    catalog.getTable(id).createTag(tag, snapshot);
                }
                return null;
            }
            case "tags": {
                RESTCatalog rest = rest(catalog);
                Map<String, Long> out = new TreeMap<>();
                String token = null;
                do {
                    org.apache.paimon.PagedList<String> page = rest.listTagsPaged(id, null, token, null);
                    for (String tag : page.getElements()) {
                        out.put(tag, rest.getTag(id, tag).snapshot().id());
                    }
                    token = page.getNextPageToken();
                } while (token != null);
                return out;
            }
            case "partitions": {
                List<Map<String, Object>> out = new ArrayList<>();
                for (Partition p : catalog.listPartitions(id)) {
                    Map<String, Object> one = new LinkedHashMap<>();
                    one.put("spec", new TreeMap<>(p.spec()));
                    one.put("record_count", p.recordCount());
                    one.put("file_count", p.fileCount());
                    out.add(one);
                }
                out.sort((a, b) -> a.get("spec").toString().compareTo(b.get("spec").toString()));
                return out;
            }
            case "delete_tag": catalog.getTable(id).deleteTag(cmd.get("tag").asText()); return null;
            case "rollback": {
                Table table = catalog.getTable(id);
                if (cmd.has("tag")) {
                    table.rollbackTo(cmd.get("tag").asText());
                } else {
                    table.rollbackTo(cmd.get("snapshot").asLong());
                }
                return null;
            }
            default: throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static Schema schema(JsonNode cmd) {
        Schema.Builder schema = Schema.newBuilder();
        for (JsonNode column : cmd.get("columns")) {
            schema.column(column.get(0).asText(), DataTypeJsonParser.parseAtomicTypeSQLString(column.get(1).asText()));
        }
        schema.primaryKey(strings(cmd.path("primary_keys")));
        schema.partitionKeys(strings(cmd.path("partition_keys")));
        cmd.path("options").fields().forEachRemaining(e -> schema.option(e.getKey(), e.getValue().asText()));
        return schema.build();
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(v -> out.add(v.asText()));
        return out;
    }

    private static List<SchemaChange> changes(JsonNode changes) {
        List<SchemaChange> out = new ArrayList<>();
        for (JsonNode c : changes) {
            if (c.has("add_column")) {
                out.add(SchemaChange.addColumn(c.get("add_column").asText(),
                        DataTypeJsonParser.parseAtomicTypeSQLString(c.get("type").asText())));
            } else if (c.has("rename_column")) {
                out.add(SchemaChange.renameColumn(c.get("rename_column").asText(), c.get("to").asText()));
            } else if (c.has("drop_column")) {
                out.add(SchemaChange.dropColumn(c.get("drop_column").asText()));
            } else if (c.has("set_option")) {
                out.add(SchemaChange.setOption(c.get("set_option").asText(), c.get("value").asText()));
            } else {
                throw new IllegalArgumentException("unknown schema change " + c);
            }
        }
        return out;
    }

    private static Map<String, Object> describeSchema(Table table) {
        Map<String, Object> out = new LinkedHashMap<>();
        List<List<String>> columns = new ArrayList<>();
        for (DataField f : table.rowType().getFields()) {
            columns.add(List.of(f.name(), f.type().toString()));
        }
        out.put("columns", columns);
        out.put("primary_keys", table.primaryKeys());
        out.put("partition_keys", table.partitionKeys());
        out.put("options", new TreeMap<>(table.options()));
        out.put("schema_id", ((FileStoreTable) table).schema().id());
        return out;
    }

    /** The table as of {"snapshot": N} or {"tag": G} when the command names one. */
    private static Table travel(Table table, JsonNode cmd) {
        Map<String, String> options = new HashMap<>();
        if (cmd.hasNonNull("snapshot")) {
            options.put("scan.snapshot-id", cmd.get("snapshot").asText());
        }
        if (cmd.hasNonNull("tag")) {
            options.put("scan.tag-name", cmd.get("tag").asText());
        }
        return options.isEmpty() ? table : table.copy(options);
    }

    private static Object write(Table table, JsonNode cmd) throws Exception {
        List<DataField> fields = table.rowType().getFields();
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        JsonNode kinds = cmd.path("kinds");
        try (IOManager io = IOManager.create(System.getProperty("java.io.tmpdir"));
                BatchTableWrite write = builder.newWrite().withIOManager(io);  // lookups (deletion vectors) spill there
                BatchTableCommit commit = builder.newCommit()) {
            int n = 0;
            for (JsonNode row : cmd.get("rows")) {
                RowKind kind = kinds.has(n) ? RowKind.fromShortString(kinds.get(n).asText()) : RowKind.INSERT;
                GenericRow out = new GenericRow(kind, fields.size());
                for (int i = 0; i < fields.size(); i++) {
                    out.setField(i, toJava(row.get(i), fields.get(i).type()));
                }
                write.write(out);
                n++;
            }
            commit.commit(write.prepareCommit());
        }
        return table.latestSnapshot().map(Snapshot::id).orElse(null);
    }

    private static Object toJava(JsonNode v, DataType type) {
        if (v == null || v.isNull()) {
            return null;
        }
        switch (type.getTypeRoot()) {
            case BIGINT: return v.asLong();
            case INTEGER: return v.asInt();
            case SMALLINT: return (short) v.asInt();
            case TINYINT: return (byte) v.asInt();
            case BOOLEAN: return v.asBoolean();
            case DOUBLE: return v.asDouble();
            case FLOAT: return (float) v.asDouble();
            case CHAR: case VARCHAR: return BinaryString.fromString(v.asText());
            default: throw new IllegalArgumentException("no JSON value for a column of type " + type);
        }
    }

    private static List<List<Object>> read(Table table) throws Exception {
        List<DataField> fields = table.rowType().getFields();
        ReadBuilder builder = table.newReadBuilder();
        List<List<Object>> out = new ArrayList<>();
        try (RecordReader<InternalRow> reader = builder.newRead().createReader(builder.newScan().plan().splits())) {
            reader.forEachRemaining(row -> {
                List<Object> values = new ArrayList<>();
                for (int i = 0; i < fields.size(); i++) {
                    values.add(row.isNullAt(i) ? null : fromJava(row, i, fields.get(i).type()));
                }
                out.add(values);
            });
        }
        return out;
    }

    private static Object fromJava(InternalRow row, int i, DataType type) {
        switch (type.getTypeRoot()) {
            case BIGINT: return row.getLong(i);
            case INTEGER: return row.getInt(i);
            case SMALLINT: return row.getShort(i);
            case TINYINT: return row.getByte(i);
            case BOOLEAN: return row.getBoolean(i);
            case DOUBLE: return row.getDouble(i);
            case FLOAT: return row.getFloat(i);
            case CHAR: case VARCHAR: return row.getString(i).toString();
            default: throw new IllegalArgumentException("no JSON value for a column of type " + type);
        }
    }
}
