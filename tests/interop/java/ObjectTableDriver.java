import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericMap;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.fs.FileIO;
import org.apache.paimon.fs.FileStatus;
import org.apache.paimon.fs.Path;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowType;

/**
 * Drives Java Paimon's side of object tables for tests/interop/test_object_table_interop.py.
 *
 * <p>The bundle jar the interop tests run (paimon-bundle 1.0-SNAPSHOT of 2024-09) predates Paimon 1.0.0's
 * ObjectTable (added 2024-11): it loads an object table as the data table underneath, which is what
 * ObjectTable delegates every read to. So this driver does what 1.0.0's AbstractCatalog.createObjectTable and
 * ObjectRefresh do, with Java's own FileIO and writers: creates the table with ObjectTable.SCHEMA, and
 * refreshes it by listing the location recursively with the catalog's FileIO and overwriting the table with one
 * row per file (ObjectRefresh.toRow's values).
 *
 * <p>Compiles against Java Paimon 2.0 too (tests/oracles/paimon_java.py), whose ObjectTable is a read-only
 * listing (no refresh: the op fails) and whose filesystem catalog refuses to create object tables.
 *
 * <p>Usage: {@code java ObjectTableDriver <commands.json> | -} (DriverSupport.serve): a batch is
 * {"warehouse": W, "commands": [...]}, run in order on one filesystem catalog, one JSON line printed per
 * command ({"error": ...} when it failed).
 *
 * <pre>
 * {"op": "create", "table": "db.t", "location": L}  creates the database if needed and the object table
 *                                                    (ObjectTable.SCHEMA's columns), -> "ok"
 * {"op": "refresh", "table": T}                     -> number of files listed (ObjectRefresh.refresh)
 * {"op": "read", "table": T, "snapshot": N?}        -> rows sorted by path; timestamps as epoch millis,
 *                                                    metadata as a JSON object
 * {"op": "schema", "table": T}                      -> [[name, type], ...] and the options
 * </pre>
 */
public class ObjectTableDriver {


    /** ObjectTable.SCHEMA of Paimon 1.0.0. */
    private static final RowType SCHEMA =
            RowType.builder()
                    .field("path", DataTypes.STRING().notNull())
                    .field("parent_path", DataTypes.STRING().notNull())
                    .field("name", DataTypes.STRING().notNull())
                    .field("length", DataTypes.BIGINT().notNull())
                    .field("mtime", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3))
                    .field("atime", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3))
                    .field("owner", DataTypes.STRING().nullable())
                    .field("generation", DataTypes.INT().nullable())
                    .field("content_type", DataTypes.STRING().nullable())
                    .field("storage_class", DataTypes.STRING().nullable())
                    .field("md5_hash", DataTypes.STRING().nullable())
                    .field("metadata_mtime", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3).nullable())
                    .field("metadata", DataTypes.MAP(DataTypes.STRING(), DataTypes.STRING()))
                    .build();

    public static void main(String[] args) throws Exception {
        DriverSupport.serveOnWarehouse(args, ObjectTableDriver::run);
    }

    private static Object run(Catalog catalog, JsonNode cmd) throws Exception {
        String op = cmd.get("op").asText();
        Identifier id = Identifier.fromString(cmd.get("table").asText());
        switch (op) {
            case "create": {
                catalog.createDatabase(id.getDatabaseName(), true);
                Schema schema = new Schema(SCHEMA.getFields(), Collections.emptyList(), Collections.emptyList(),
                        Map.of("type", "object-table", "object-location", cmd.get("location").asText()), null);
                catalog.createTable(id, schema, false);
                return "ok";
            }
            case "refresh": {
                Table table = catalog.getTable(id);
                if (!(table instanceof FileStoreTable)) {  // 2.0's ObjectTable: a read-only listing of the location
                    throw new UnsupportedOperationException(table.getClass().getSimpleName() + " has no refresh");
                }
                return refresh((FileStoreTable) table);
            }
            case "read": {
                Table table = catalog.getTable(id);
                if (cmd.has("snapshot")) {
                    table = table.copy(Collections.singletonMap("scan.snapshot-id", cmd.get("snapshot").asText()));
                }
                return read(table);
            }
            case "schema": {
                Table table = catalog.getTable(id);
                List<List<String>> fields = new ArrayList<>();
                for (DataField f : table.rowType().getFields()) {
                    fields.add(List.of(f.name(), f.type().toString()));
                }
                return Map.of("fields", fields, "options", table.options(), "class", table.getClass().getSimpleName());
            }
            default: throw new IllegalArgumentException("unknown op " + op);
        }
    }

    /** ObjectRefresh.refresh: the files under object-location, listed with the table's FileIO, as its rows. */
    private static long refresh(FileStoreTable table) throws Exception {
        List<FileStatus> files = new ArrayList<>();
        listAllFiles(table.fileIO(), new Path(table.options().get("object-location")), files);
        BatchWriteBuilder builder = table.newBatchWriteBuilder().withOverwrite();
        try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
            for (FileStatus file : files) {
                write.write(GenericRow.of(
                        BinaryString.fromString(file.getPath().toString()),
                        BinaryString.fromString(file.getPath().getParent().toString()),
                        BinaryString.fromString(file.getPath().getName()),
                        file.getLen(),
                        Timestamp.fromEpochMillis(file.getModificationTime()),
                        // 1.0.0's FileStatus.getAccessTime() / getOwner(), which this jar's FileStatus lacks: their
                        // defaults, 0 and null, which LocalFileIO's status keeps
                        Timestamp.fromEpochMillis(0),
                        null,
                        null, null, null, null, null,
                        new GenericMap(Collections.emptyMap())));
            }
            commit.commit(write.prepareCommit());
        }
        return files.size();
    }

    private static void listAllFiles(FileIO fileIO, Path directory, List<FileStatus> out) throws Exception {
        FileStatus[] files = fileIO.listStatus(directory);
        if (files == null) {
            return;
        }
        for (FileStatus file : files) {
            if (file.isDir()) {
                listAllFiles(fileIO, file.getPath(), out);
            } else {
                out.add(file);
            }
        }
    }

    private static List<List<Object>> read(Table table) throws Exception {
        List<List<Object>> out = DriverSupport.rows(table);
        out.sort((a, b) -> ((String) a.get(0)).compareTo((String) b.get(0)));
        return out;
    }
}
