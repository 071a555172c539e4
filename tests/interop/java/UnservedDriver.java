import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.FileSystemCatalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.BinaryVector;
import org.apache.paimon.data.BlobData;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.fs.FileIO;
import org.apache.paimon.fs.Path;
import org.apache.paimon.globalindex.sorted.SortedGlobalIndexBuilder;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.schema.SchemaManager;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.RowType;

/**
 * Drives Java Paimon 2.0's side of tests/interop/test_unserved_features.py: tables holding what paimon-sql
 * does not serve (BLOB and VECTOR columns, a btree global index, chain tables). None of these exist in
 * Paimon 1.0: this driver compiles against 2.0 only.
 *
 * <p>Usage: {@code java UnservedDriver <commands.json> | -} (DriverSupport.serve): a batch is
 * {"warehouse": W, "commands": [...]}, run in order on one filesystem catalog.
 *
 * <pre>
 * {"op": "create", "table": T, "columns": [[name, type], ...], "primary_keys": [...]?, "partition_keys": [...]?,
 *  "options": {...}?}                                creates db and table, types as Paimon's SQL strings -> "ok"
 * {"op": "write", "table": T, "rows": [[...], ...]}  one batch commit; BLOB values given as text (its UTF-8
 *                                                    bytes), VECTOR values as lists of numbers -> "ok"
 * {"op": "read", "table": T, "columns": [...]}      the rows of those columns (BLOB as text, VECTOR as a list)
 * {"op": "index", "table": T, "column": C}          builds a btree global index on C -> number of messages
 * {"op": "chain", "table": T, "columns": ..., "primary_keys": ..., "partition_keys": ..., "options": {...},
 *  "rows": [...]}                                    a chain table as Paimon's ChainTableFileStoreTableTest makes
 *                                                    one (schema, branches snapshot and delta, their fallback
 *                                                    options); the rows written to its snapshot branch -> "ok"
 * </pre>
 */
public class UnservedDriver {

    public static void main(String[] args) throws Exception {
        DriverSupport.serveOnWarehouse(args, UnservedDriver::run, "cache-enabled", "false");  // the chain op changes schemas behind the catalog
    }

    private static Object run(Catalog catalog, JsonNode cmd) throws Exception {
        Identifier id = Identifier.fromString(cmd.get("table").asText());
        switch (cmd.get("op").asText()) {
            case "create":
                catalog.createDatabase(id.getDatabaseName(), true);
                catalog.createTable(id, schema(cmd), false);
                return "ok";
            case "chain": {
                catalog.createDatabase(id.getDatabaseName(), true);
                Path path = ((FileSystemCatalog) catalog).getTableLocation(id);
                FileIO fileIO = ((FileSystemCatalog) catalog).fileIO();
                new SchemaManager(fileIO, path).createTable(schema(cmd));
                FileStoreTable table = (FileStoreTable) catalog.getTable(id);
                table.createBranch("snapshot");
                table.createBranch("delta");
                for (String branch : List.of("main", "snapshot", "delta")) {
                    new SchemaManager(fileIO, path, branch).commitChanges(
                            SchemaChange.setOption("scan.fallback-snapshot-branch", "snapshot"),
                            SchemaChange.setOption("scan.fallback-delta-branch", "delta"));
                }
                write(((FileStoreTable) catalog.getTable(id)).switchToBranch("snapshot"), cmd.get("rows"));
                return "ok";
            }
            case "write":
                write(catalog.getTable(id), cmd.get("rows"));
                return "ok";
            case "read":
                return read(catalog.getTable(id), texts(cmd.get("columns")));
            case "index": {
                FileStoreTable table = (FileStoreTable) catalog.getTable(id);
                SortedGlobalIndexBuilder builder =
                        new SortedGlobalIndexBuilder(table, "btree").withIndexField(cmd.get("column").asText());
                List<DataSplit> splits = builder.scan().orElseThrow(IllegalStateException::new).getRight();
                List<CommitMessage> messages = new ArrayList<>();
                IOManager io = IOManager.create(Files.createTempDirectory("unserved-driver").toString());
                for (DataSplit split : splits) {
                    messages.addAll(builder.build(split, io));
                }
                try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
                    commit.commit(messages);
                }
                return messages.size();
            }
            default:
                throw new IllegalArgumentException("unknown op " + cmd.get("op").asText());
        }
    }

    private static Schema schema(JsonNode cmd) {
        Schema.Builder schema = Schema.newBuilder();
        for (JsonNode c : cmd.get("columns")) {
            schema.column(c.get(0).asText(), DataTypeJsonParser.parseAtomicTypeSQLString(c.get(1).asText()));
        }
        schema.primaryKey(texts(cmd.get("primary_keys")));
        schema.partitionKeys(texts(cmd.get("partition_keys")));
        return schema.options(DriverSupport.tableOptions(cmd)).build();
    }

    private static void write(Table table, JsonNode rows) throws Exception {
        List<DataField> fields = table.rowType().getFields();
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
            for (JsonNode r : rows) {
                GenericRow row = new GenericRow(fields.size());
                for (int i = 0; i < fields.size(); i++) {
                    row.setField(i, r.get(i).isNull() ? null : internal(r.get(i), fields.get(i).type()));
                }
                write.write(row);
            }
            commit.commit(write.prepareCommit());
        }
    }

    private static List<String> texts(JsonNode node) {
        List<String> out = new ArrayList<>();
        if (node != null) {
            node.forEach(n -> out.add(n.asText()));
        }
        return out;
    }

    private static Object internal(JsonNode value, DataType type) {
        switch (type.getTypeRoot()) {
            case INTEGER: return value.asInt();
            case BIGINT: return value.asLong();
            case BLOB: return new BlobData(value.asText().getBytes(StandardCharsets.UTF_8));
            case VECTOR: {
                float[] out = new float[value.size()];
                for (int i = 0; i < out.length; i++) {
                    out[i] = (float) value.get(i).asDouble();
                }
                return BinaryVector.fromPrimitiveArray(out);
            }
            default: return BinaryString.fromString(value.asText());
        }
    }

    /** The rows of ``columns``, sorted by their text. */
    private static List<List<Object>> read(Table table, List<String> columns) throws Exception {
        RowType type = table.rowType().project(columns);
        ReadBuilder builder = table.newReadBuilder().withReadType(type);
        List<List<Object>> out = new ArrayList<>();
        try (RecordReader<InternalRow> reader = builder.newRead().createReader(builder.newScan().plan())) {
            reader.forEachRemaining(row -> {
                List<Object> values = new ArrayList<>();
                for (int i = 0; i < columns.size(); i++) {
                    values.add(row.isNullAt(i) ? null : external(row, i, type.getTypeAt(i)));
                }
                out.add(values);
            });
        }
        out.sort((a, b) -> a.toString().compareTo(b.toString()));
        return out;
    }

    private static Object external(InternalRow row, int i, DataType type) {
        switch (type.getTypeRoot()) {
            case INTEGER: return row.getInt(i);
            case BIGINT: return row.getLong(i);
            case BLOB: return new String(row.getBlob(i).toData(), StandardCharsets.UTF_8);
            case VECTOR: {
                List<Double> out = new ArrayList<>();
                for (float f : row.getVector(i).toFloatArray()) {
                    out.add((double) f);
                }
                return out;
            }
            default: return row.getString(i).toString();
        }
    }
}
