import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.deletionvectors.Bitmap64DeletionVector;
import org.apache.paimon.deletionvectors.BucketedDvMaintainer;
import org.apache.paimon.deletionvectors.DeletionVector;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.index.IndexFileHandler;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.manifest.IndexManifestEntry;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowKind;

/**
 * Drives Java Paimon 2.0's side of 64-bit deletion vectors ({@code deletion-vectors.bitmap64}) for
 * tests/interop/test_dv64_interop.py. Paimon 1.0 has neither the option nor Bitmap64DeletionVector: this
 * driver compiles against 2.0 only.
 *
 * <p>Tables are (id BIGINT, name STRING) with deletion vectors, fixed buckets: a primary-key table (key id)
 * or an append table (bucket-key id). Deleting rows of an append table is what paimon-spark's DELETE does
 * for it: per bucket, the bucket's BucketedDvMaintainer (restored from its index files) marks the rows'
 * positions, writes one new index file and the commit replaces the old ones.
 *
 * <p>Usage: {@code java Bitmap64Driver <commands.json> | -} (DriverSupport.serve): a batch is
 * {"warehouse": W, "commands": [...]}, run in order on one filesystem catalog.
 *
 * <pre>
 * {"op": "create", "table": T, "pk": bool, "options": {...}}  deletion-vectors.enabled added -> "ok"
 * {"op": "write", "table": T, "rows": [[id, name, "+I"|"-D"], ...]}  one batch commit -> "ok"
 * {"op": "delete", "table": T, "ids": [...]}  append table: rows deleted by vectors -> rows deleted
 * {"op": "read", "table": T}                 -> [[id, name], ...] sorted by id
 * {"op": "vectors", "table": T}              -> [[data file, [positions...], "Bitmap64DeletionVector"|...]]
 * {"op": "vector", "positions": [...]}       -> a Bitmap64DeletionVector's serialized bytes, hex
 * </pre>
 */
public class Bitmap64Driver {

    public static void main(String[] args) throws Exception {
        DriverSupport.serveOnWarehouse(args, Bitmap64Driver::run);
    }

    private static Object run(Catalog catalog, JsonNode cmd) throws Exception {
        if (cmd.get("op").asText().equals("vector")) {
            Bitmap64DeletionVector vector = new Bitmap64DeletionVector();
            cmd.get("positions").forEach(p -> vector.delete(p.asLong()));
            StringBuilder hex = new StringBuilder();
            for (byte b : DeletionVector.serializeToBytes(vector)) {
                hex.append(String.format("%02x", b));
            }
            return hex.toString();
        }
        Identifier id = Identifier.fromString(cmd.get("table").asText());
        switch (cmd.get("op").asText()) {
            case "create": {
                catalog.createDatabase(id.getDatabaseName(), true);
                Map<String, String> opts = DriverSupport.tableOptions(cmd, "deletion-vectors.enabled", "true");
                Schema.Builder schema = Schema.newBuilder()
                        .column("id", DataTypes.BIGINT().notNull())
                        .column("name", DataTypes.STRING())
                        .options(opts);
                if (cmd.get("pk").asBoolean()) {
                    schema.primaryKey("id");
                }
                catalog.createTable(id, schema.build(), false);
                return "ok";
            }
            case "write": {
                BatchWriteBuilder builder = catalog.getTable(id).newBatchWriteBuilder();
                try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
                    write.withIOManager(IOManager.create(System.getProperty("java.io.tmpdir")));  // lookup needs it
                    for (JsonNode r : cmd.get("rows")) {
                        RowKind kind = RowKind.fromShortString(r.get(2).asText());
                        write.write(GenericRow.ofKind(kind, r.get(0).asLong(), BinaryString.fromString(r.get(1).asText())));
                    }
                    commit.commit(write.prepareCommit());
                }
                return "ok";
            }
            case "delete":
                return delete((FileStoreTable) catalog.getTable(id), cmd.get("ids"));
            case "read": {
                List<List<Object>> rows = DriverSupport.rows(catalog.getTable(id));
                rows.sort((a, b) -> Long.compare((Long) a.get(0), (Long) b.get(0)));
                return rows;
            }
            case "vectors":
                return vectors((FileStoreTable) catalog.getTable(id));
            default:
                throw new IllegalArgumentException("unknown op " + cmd.get("op").asText());
        }
    }

    /** Deletes the rows whose id is in {@code ids} by deletion vectors, one commit; the number deleted. */
    private static int delete(FileStoreTable table, JsonNode ids) throws Exception {
        Set<Long> wanted = new HashSet<>();
        ids.forEach(i -> wanted.add(i.asLong()));
        Snapshot snapshot = table.snapshotManager().latestSnapshot();
        IndexFileHandler handler = table.store().newIndexFileHandler();
        Map<List<Object>, BucketedDvMaintainer> maintainers = new LinkedHashMap<>();
        int deleted = 0;
        for (ManifestEntry e : table.store().newScan().withSnapshot(snapshot).plan().files()) {
            List<Long> positions = positionsOf(table, snapshot, e, wanted);
            if (positions.isEmpty()) {
                continue;
            }
            BucketedDvMaintainer maintainer = maintainers.computeIfAbsent(
                    java.util.Arrays.asList(e.partition(), e.bucket()),
                    k -> BucketedDvMaintainer.factory(handler).create(e.partition(), e.bucket(),
                            handler.scan(snapshot, "DELETION_VECTORS", e.partition(), e.bucket())));
            for (long p : positions) {
                maintainer.notifyNewDeletion(e.file().fileName(), p);
            }
            deleted += positions.size();
        }
        List<CommitMessage> messages = new ArrayList<>();
        for (Map.Entry<List<Object>, BucketedDvMaintainer> m : maintainers.entrySet()) {
            BinaryRow partition = (BinaryRow) m.getKey().get(0);
            int bucket = (Integer) m.getKey().get(1);
            List<IndexFileMeta> old = handler.scan(snapshot, "DELETION_VECTORS", partition, bucket);
            Optional<IndexFileMeta> written = m.getValue().writeDeletionVectorsIndex();
            List<IndexFileMeta> added = written.map(Collections::singletonList).orElse(Collections.emptyList());
            messages.add(new CommitMessageImpl(partition, bucket, table.coreOptions().bucket(),
                    new DataIncrement(Collections.emptyList(), Collections.emptyList(), Collections.emptyList(),
                            added, old),
                    CompactIncrement.emptyIncrement()));
        }
        try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
            commit.commit(messages);
        }
        return deleted;
    }

    /** Positions (row numbers in the file) of the rows of one data file whose id is wanted. */
    private static List<Long> positionsOf(FileStoreTable table, Snapshot snapshot, ManifestEntry e, Set<Long> wanted)
            throws Exception {
        DataSplit split = DataSplit.builder()
                .withSnapshot(snapshot.id())
                .withPartition(e.partition())
                .withBucket(e.bucket())
                .withTotalBuckets(e.totalBuckets())
                .withBucketPath(table.store().pathFactory().bucketPath(e.partition(), e.bucket()).toString())
                .withDataFiles(Collections.singletonList(e.file()))
                .rawConvertible(true)
                .build();
        List<Long> out = new ArrayList<>();
        long[] position = {0};
        try (RecordReader<InternalRow> reader = table.newRead().createReader(split)) {
            reader.forEachRemaining(row -> {
                if (wanted.contains(row.getLong(0))) {
                    out.add(position[0]);
                }
                position[0]++;
            });
        }
        return out;
    }

    /** The latest snapshot's deletion vectors as Java reads them, by data file. */
    private static List<List<Object>> vectors(FileStoreTable table) {
        IndexFileHandler handler = table.store().newIndexFileHandler();
        Map<String, List<Object>> out = new TreeMap<>();
        for (IndexManifestEntry entry : handler.scan("DELETION_VECTORS")) {
            for (Map.Entry<String, DeletionVector> v : handler.readAllDeletionVectors(entry).entrySet()) {
                List<Long> positions = new ArrayList<>();
                v.getValue().forEachDeletedPosition(positions::add);
                Collections.sort(positions);
                out.put(v.getKey(), java.util.Arrays.asList(v.getKey(), positions,
                        v.getValue().getClass().getSimpleName()));
            }
        }
        return new ArrayList<>(out.values());
    }
}
