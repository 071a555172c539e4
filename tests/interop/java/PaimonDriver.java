import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import org.apache.paimon.CoreOptions;
import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericArray;
import org.apache.paimon.data.GenericMap;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalArray;
import org.apache.paimon.data.InternalMap;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.stats.ColStats;
import org.apache.paimon.stats.Statistics;
import org.apache.paimon.tag.Tag;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.fs.Path;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.operation.FileStoreWrite;
import org.apache.paimon.predicate.PredicateBuilder;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.RowKeyExtractor;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.ArrayType;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.MapType;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.SnapshotManager;

/**
 * Drives Java Apache Paimon for tests/interop/test_java_interop.py: the oracle for bytes.
 *
 * <p>Usage: {@code java PaimonDriver <commands.json>}: a JSON list of commands, run in order in one
 * JVM (start-up dominates), one JSON line printed per command ({"error": ...} when it failed);
 * {@code java PaimonDriver -}: such lists from stdin, one a line, each answered as one batch on
 * fresh catalogs and ended by a line "--end--" (DriverSupport.serve). Values travel as JSON: DATE and
 * TIMESTAMP as ISO text, DECIMAL as text, BINARY as hex, ARRAY/ROW as lists, MAP as [[k, v], ...].
 *
 * <pre>
 * {"op": "create", "warehouse": W, "table": "db.t", "fields": [[name, type], ...],
 *  "primary_keys": [...], "partition_keys": [...], "options": {...}}       -> "ok"
 * {"op": "write", ..., "rows": [[v, ...], ...], "kinds": ["+I", "-D", ...]} -> snapshot id
 * {"op": "read", ..., "tag": T, "snapshot": N, "equal": [column, value]}     -> [[v, ...], ...]
 * {"op": "compact", ...}  full compaction of every partition and bucket      -> snapshot id
 * {"op": "tag", ..., "name": T, "snapshot": N?, "time_retained_seconds": S?}  -> "ok"
 * {"op": "tag_info", ..., "name": T}    -> [snapshot id, tagCreateTime (ISO) | null, tagTimeRetained (s) | null]
 * {"op": "statistics", ...}             -> the latest snapshot's statistics as Java parses them, or null
 * {"op": "evolve", ..., "changes": [["add", c, type] | ["rename", c, new] | ["drop", c]
 *                                  | ["type", c, type] | ["set", key, value]]} -> "ok"
 * {"op": "tag", ..., "name": T, "snapshot": N (default latest)}              -> "ok"
 * {"op": "snapshots", ...}  the snapshot files Java lists and its EARLIEST/LATEST view
 *     -> {"ids": [...], "earliest": N, "latest": N, "earliest_hint": N, "latest_hint": N, "kinds": [...]}
 * </pre>
 *
 * Types are Paimon's schema JSON ("INT", "DECIMAL(38, 10)", {"type": "ARRAY", "element": ...}).
 *
 * <p>Compiles against Java Paimon 1.0 and 2.0 alike (tests/oracles/paimon_java.py): the two calls
 * whose API changed between them, the unaware-bucket compaction and HashBucketAssigner's constructor,
 * go through reflection ({@link #compactUnaware}, {@link #hashAssigner}); the hint files are read as
 * the files they are.
 */
public class PaimonDriver {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS");

    public static void main(String[] args) throws Exception {
        DriverSupport.serve(args, PaimonDriver::batch);
    }

    /** One batch of commands, on catalogs of its own (nothing cached from an earlier batch). */
    private static void batch(JsonNode commands) throws Exception {
        Map<String, Catalog> catalogs = new HashMap<>();
        for (JsonNode cmd : commands) {
            String warehouse = cmd.get("warehouse").asText();
            Catalog catalog = catalogs.computeIfAbsent(warehouse,
                    w -> CatalogFactory.createCatalog(CatalogContext.create(new Path(w))));
            DriverSupport.answer(() -> run(catalog, cmd));
        }
        for (Catalog c : catalogs.values()) {
            c.close();
        }
    }

    private static Object run(Catalog catalog, JsonNode cmd) throws Exception {
        Identifier id = Identifier.fromString(cmd.get("table").asText());
        String op = cmd.get("op").asText();
        if (op.equals("create")) {
            catalog.createDatabase(id.getDatabaseName(), true);
            Schema.Builder schema = Schema.newBuilder();
            for (JsonNode f : cmd.get("fields")) {
                schema.column(f.get(0).asText(), DataTypeJsonParser.parseDataType(f.get(1)));
            }
            schema.primaryKey(strings(cmd.get("primary_keys")));
            schema.partitionKeys(strings(cmd.get("partition_keys")));
            if (cmd.has("options")) {
                cmd.get("options").fields().forEachRemaining(e -> schema.option(e.getKey(), e.getValue().asText()));
            }
            catalog.createTable(id, schema.build(), false);
            return "ok";
        }
        if (op.equals("evolve")) {
            List<SchemaChange> changes = new ArrayList<>();
            for (JsonNode c : cmd.get("changes")) {
                String kind = c.get(0).asText(), name = c.get(1).asText();
                switch (kind) {
                    case "add": changes.add(SchemaChange.addColumn(name, DataTypeJsonParser.parseDataType(c.get(2)))); break;
                    case "rename": changes.add(SchemaChange.renameColumn(name, c.get(2).asText())); break;
                    case "drop": changes.add(SchemaChange.dropColumn(name)); break;
                    case "type": changes.add(SchemaChange.updateColumnType(name, DataTypeJsonParser.parseDataType(c.get(2)))); break;
                    case "set": changes.add(SchemaChange.setOption(name, c.get(2).asText())); break;
                    default: throw new IllegalArgumentException("unknown schema change " + kind);
                }
            }
            catalog.alterTable(id, changes, false);
            return "ok";
        }
        FileStoreTable table = (FileStoreTable) catalog.getTable(id);
        switch (op) {
            case "write": return write(table, cmd);
            case "read": return read(table, cmd);
            case "compact": return compact(table);
            case "snapshots": return snapshots(table);
            case "tag":
                if (cmd.has("time_retained_seconds")) {
                    table.createTag(cmd.get("name").asText(), cmd.get("snapshot").asLong(),
                            Duration.ofSeconds(cmd.get("time_retained_seconds").asLong()));
                } else if (cmd.has("snapshot")) {
                    table.createTag(cmd.get("name").asText(), cmd.get("snapshot").asLong());
                } else {
                    table.createTag(cmd.get("name").asText());
                }
                return "ok";
            case "tag_info": {
                Tag tag = Tag.fromPath(table.fileIO(), table.tagManager().tagPath(cmd.get("name").asText()));
                return java.util.Arrays.asList(tag.id(),
                        tag.getTagCreateTime() == null ? null : tag.getTagCreateTime().toString(),
                        tag.getTagTimeRetained() == null ? null : tag.getTagTimeRetained().getSeconds());
            }
            case "statistics": return statistics(table);
            default: throw new IllegalArgumentException("unknown op " + op);
        }
    }

    /** The latest snapshot's statistics as Java reads them (min/max parsed by the column types):
     * [mergedRecordCount, mergedRecordSize, {column: [colId, distinct, min, max, nulls, avgLen, maxLen]}]. */
    private static Object statistics(FileStoreTable table) {
        Statistics stats = table.statistics().orElse(null);
        if (stats == null) {
            return null;
        }
        Map<String, Object> cols = new LinkedHashMap<>();
        for (Map.Entry<String, ColStats<?>> e : stats.colStats().entrySet()) {
            ColStats<?> c = e.getValue();
            cols.put(e.getKey(), java.util.Arrays.asList(c.colId(), boxed(c.distinctCount()),
                    c.min().map(Object::toString).orElse(null), c.max().map(Object::toString).orElse(null),
                    boxed(c.nullCount()), boxed(c.avgLen()), boxed(c.maxLen())));
        }
        return java.util.Arrays.asList(boxed(stats.mergedRecordCount()), boxed(stats.mergedRecordSize()), cols);
    }

    private static Long boxed(java.util.OptionalLong v) {
        return v.isPresent() ? v.getAsLong() : null;
    }

    /** What Java sees of the snapshot directory: every listed snapshot (each one parsed), the
     * earliest/latest it resolves and the raw hint files (null when absent). */
    private static Map<String, Object> snapshots(FileStoreTable table) throws Exception {
        SnapshotManager sm = table.snapshotManager();
        List<Long> ids = new ArrayList<>();
        List<String> kinds = new ArrayList<>();
        Iterator<Snapshot> it = sm.snapshots();
        while (it.hasNext()) {
            Snapshot s = it.next();
            ids.add(s.id());
            kinds.add(s.commitKind().name());
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("ids", ids);
        out.put("kinds", kinds);
        out.put("earliest", sm.earliestSnapshotId());
        out.put("latest", sm.latestSnapshotId());
        out.put("earliest_hint", hint(sm, "EARLIEST"));
        out.put("latest_hint", hint(sm, "LATEST"));
        return out;
    }

    /** The snapshot id a hint file of the snapshot directory holds, null when absent (1.0 reads it
     * with SnapshotManager.readHint, 2.0 with HintFileUtils: the file is the same). */
    private static Long hint(SnapshotManager sm, String name) throws Exception {
        return sm.fileIO().readOverwrittenFileUtf8(new Path(sm.snapshotDirectory(), name))
                .map(text -> Long.parseLong(text.trim())).orElse(null);
    }

    private static List<String> strings(JsonNode node) {
        List<String> out = new ArrayList<>();
        if (node != null) {
            node.forEach(n -> out.add(n.asText()));
        }
        return out;
    }

    /** One batch commit of the rows; dynamic-bucket tables get their buckets from the table's HASH index. */
    private static long write(FileStoreTable table, JsonNode cmd) throws Exception {
        RowType type = table.rowType();
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        HashBucketAssigner assigner = null;
        RowKeyExtractor keys = null;
        if (table.bucketMode() == BucketMode.HASH_DYNAMIC) {
            assigner = hashAssigner(table);
            keys = table.createRowKeyExtractor();
        }
        try (BatchTableWrite write = newWrite(builder); BatchTableCommit commit = builder.newCommit()) {
            JsonNode kinds = cmd.get("kinds");
            int i = 0;
            for (JsonNode r : cmd.get("rows")) {
                GenericRow row = (GenericRow) toPaimon(r, type);
                if (kinds != null) {
                    row.setRowKind(RowKind.fromShortString(kinds.get(i).asText()));
                }
                i++;
                if (assigner != null) {
                    keys.setRecord(row);
                    write.write(row, assigner.assign(keys.partition(), keys.trimmedPrimaryKey().hashCode()));
                } else {
                    write.write(row);
                }
            }
            commit.commit(write.prepareCommit());
        }
        return table.snapshotManager().latestSnapshotId();
    }

    /** One assigner for all buckets of the table (one channel, one assigner). 2.0's constructor takes
     * the table's dynamic-bucket.max-buckets after 1.0's arguments. */
    private static HashBucketAssigner hashAssigner(FileStoreTable table) throws Exception {
        CoreOptions options = table.coreOptions();
        List<Object> args = new ArrayList<>(List.of(table.snapshotManager(), UUID.randomUUID().toString(),
                table.store().newIndexFileHandler(), 1, 1, 0, options.dynamicBucketTargetRowNum()));
        Constructor<?> constructor = HashBucketAssigner.class.getConstructors()[0];
        if (constructor.getParameterCount() == args.size() + 1) {
            args.add(CoreOptions.class.getMethod("dynamicBucketMaxBuckets").invoke(options));
        }
        return (HashBucketAssigner) constructor.newInstance(args.toArray());
    }

    /** A write with a temp-disk IOManager, which lookup-based merges (first-row, deletion vectors) need. */
    private static BatchTableWrite newWrite(BatchWriteBuilder builder) {
        BatchTableWrite write = builder.newWrite();
        write.withIOManager(IOManager.create(System.getProperty("java.io.tmpdir")));
        return write;
    }

    private static List<Object> read(FileStoreTable table, JsonNode cmd) throws Exception {
        Map<String, String> options = new HashMap<>();
        if (cmd.has("tag")) {
            options.put("scan.tag-name", cmd.get("tag").asText());
        }
        if (cmd.has("snapshot")) {
            options.put("scan.snapshot-id", cmd.get("snapshot").asText());
        }
        Table t = options.isEmpty() ? table : table.copy(options);
        RowType type = t.rowType();
        ReadBuilder rb = t.newReadBuilder();
        JsonNode equal = cmd.get("equal");
        if (equal != null) {
            int idx = type.getFieldIndex(equal.get(0).asText());
            Object value = toPaimon(equal.get(1), type.getTypeAt(idx));
            rb.withFilter(new PredicateBuilder(type).equal(idx, value));
        }
        List<Split> splits = rb.newScan().plan().splits();
        List<Object> out = new ArrayList<>();
        try (RecordReader<InternalRow> reader = rb.newRead().executeFilter().createReader(splits)) {
            reader.forEachRemaining(row -> out.add(fromPaimon(row, type)));
        }
        return out;
    }

    /** Full compaction: every (partition, bucket) of the latest snapshot; unaware-bucket append tables
     * through the compaction coordinator, as Paimon's own compact jobs do. */
    private static long compact(FileStoreTable table) throws Exception {
        if (table.bucketMode() == BucketMode.BUCKET_UNAWARE) {
            try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
                commit.commit(compactUnaware(table));
            }
        } else {
            BatchWriteBuilder builder = table.newBatchWriteBuilder();
            Set<List<Object>> seen = new LinkedHashSet<>();
            try (BatchTableWrite write = newWrite(builder); BatchTableCommit commit = builder.newCommit()) {
                for (Split s : table.newReadBuilder().newScan().plan().splits()) {
                    DataSplit split = (DataSplit) s;
                    if (seen.add(List.of(split.partition(), split.bucket()))) {
                        write.compact(split.partition(), split.bucket(), true);
                    }
                }
                commit.commit(write.prepareCommit());
            }
        }
        return table.snapshotManager().latestSnapshotId();
    }

    /** What the compaction coordinator's tasks made of an unaware-bucket table's small files. The
     * coordinator and task are UnawareAppendTableCompactionCoordinator and UnawareAppendCompactionTask
     * in 1.0, AppendCompactCoordinator and AppendCompactTask in 2.0, with the same calls. */
    private static List<CommitMessage> compactUnaware(FileStoreTable table) throws Exception {
        Class<?> coordinator = firstClass("org.apache.paimon.append.AppendCompactCoordinator",
                "org.apache.paimon.append.UnawareAppendTableCompactionCoordinator");
        Object tasks = coordinator.getMethod("run").invoke(
                coordinator.getConstructor(FileStoreTable.class, boolean.class).newInstance(table, false));
        List<CommitMessage> messages = new ArrayList<>();
        FileStoreWrite<?> write = table.store().newWrite(UUID.randomUUID().toString());
        try {
            for (Object task : (List<?>) tasks) {
                Method doCompact = Arrays.stream(task.getClass().getMethods())
                        .filter(m -> m.getName().equals("doCompact")).findFirst().orElseThrow();
                messages.add((CommitMessage) doCompact.invoke(task, table, write));
            }
        } finally {
            write.close();
        }
        return messages;
    }

    /** The first of the named classes this Paimon has. */
    private static Class<?> firstClass(String... names) throws ClassNotFoundException {
        for (String name : names) {
            try {
                return Class.forName(name);
            } catch (ClassNotFoundException e) {
                // not in this version: the next name
            }
        }
        throw new ClassNotFoundException(String.join(" or ", names));
    }

    private static Object toPaimon(JsonNode v, DataType type) {
        if (v == null || v.isNull()) {
            return null;
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN: return v.asBoolean();
            case TINYINT: return (byte) v.asInt();
            case SMALLINT: return (short) v.asInt();
            case INTEGER: return v.asInt();
            case BIGINT: return v.asLong();
            case FLOAT: return (float) v.asDouble();
            case DOUBLE: return v.asDouble();
            case CHAR:
            case VARCHAR: return BinaryString.fromString(v.asText());
            case BINARY:
            case VARBINARY: return hexToBytes(v.asText());
            case DECIMAL: {
                DecimalType d = (DecimalType) type;
                return Decimal.fromBigDecimal(new BigDecimal(v.asText()), d.getPrecision(), d.getScale());
            }
            case DATE: return (int) LocalDate.parse(v.asText()).toEpochDay();
            case TIMESTAMP_WITHOUT_TIME_ZONE: return Timestamp.fromLocalDateTime(LocalDateTime.parse(v.asText()));
            case ARRAY: {
                DataType element = ((ArrayType) type).getElementType();
                Object[] items = new Object[v.size()];
                for (int i = 0; i < items.length; i++) {
                    items[i] = toPaimon(v.get(i), element);
                }
                return new GenericArray(items);
            }
            case MAP: {
                MapType m = (MapType) type;
                Map<Object, Object> map = new LinkedHashMap<>();
                v.forEach(kv -> map.put(toPaimon(kv.get(0), m.getKeyType()), toPaimon(kv.get(1), m.getValueType())));
                return new GenericMap(map);
            }
            case ROW: {
                List<DataField> fields = ((RowType) type).getFields();
                GenericRow row = new GenericRow(fields.size());
                for (int i = 0; i < fields.size(); i++) {
                    row.setField(i, toPaimon(v.get(i), fields.get(i).type()));
                }
                return row;
            }
            default: throw new IllegalArgumentException("unsupported type " + type);
        }
    }

    private static Object fromPaimon(InternalRow row, RowType type) {
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < type.getFieldCount(); i++) {
            out.add(fromPaimon(InternalRow.createFieldGetter(type.getTypeAt(i), i).getFieldOrNull(row),
                    type.getTypeAt(i)));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Object fromPaimon(Object v, DataType type) {
        if (v == null) {
            return null;
        }
        switch (type.getTypeRoot()) {
            case TINYINT:
            case SMALLINT: return ((Number) v).intValue();
            case CHAR:
            case VARCHAR: return v.toString();
            case BINARY:
            case VARBINARY: return bytesToHex((byte[]) v);
            case DECIMAL: return ((Decimal) v).toBigDecimal().toPlainString();
            case DATE: return LocalDate.ofEpochDay((Integer) v).toString();
            case TIMESTAMP_WITHOUT_TIME_ZONE: return ((Timestamp) v).toLocalDateTime().format(TS);
            case ARRAY: {
                DataType element = ((ArrayType) type).getElementType();
                InternalArray a = (InternalArray) v;
                InternalArray.ElementGetter get = InternalArray.createElementGetter(element);
                List<Object> out = new ArrayList<>();
                for (int i = 0; i < a.size(); i++) {
                    out.add(fromPaimon(get.getElementOrNull(a, i), element));
                }
                return out;
            }
            case MAP: {
                MapType m = (MapType) type;
                InternalMap map = (InternalMap) v;
                List<Object> keys = (List<Object>) fromPaimon(map.keyArray(), new ArrayType(m.getKeyType()));
                List<Object> values = (List<Object>) fromPaimon(map.valueArray(), new ArrayType(m.getValueType()));
                List<Object> out = new ArrayList<>();
                for (int i = 0; i < keys.size(); i++) {
                    out.add(Arrays.asList(keys.get(i), values.get(i)));
                }
                return out;
            }
            case ROW: return fromPaimon((InternalRow) v, (RowType) type);
            default: return v;
        }
    }

    private static byte[] hexToBytes(String hex) {
        byte[] out = new byte[hex.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    private static String bytesToHex(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        for (byte b : bytes) {
            sb.append(String.format("%02x", b));
        }
        return sb.toString();
    }
}
