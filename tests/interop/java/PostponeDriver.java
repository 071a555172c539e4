import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.fs.Path;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.operation.FileSystemWriteRestore;
import org.apache.paimon.postpone.BucketFiles;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.PostponeUtils;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.sink.RowKeyExtractor;
import org.apache.paimon.table.sink.TableCommitImpl;
import org.apache.paimon.table.sink.TableWriteImpl;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.TableRead;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.utils.CloseableIterator;

/**
 * Java Paimon 2.0 on a postpone bucket table ({@code bucket = -2}): {@code db.t} (k INT, v STRING,
 * pt INT, primary key (k, pt), partitioned by pt).
 *
 * <p>Served as DriverSupport serves batches: {@code {"warehouse": ..., "commands": [{"op": ...,
 * "arg": ...}, ...]}}, each command answered by its result or {"error": ...}, on a catalog of its own
 * (a fresh view of the table). Commands:
 *
 * <ul>
 *   <li>{@code create [key=value,...]}: the table, with these options beside {@code bucket = -2};
 *   <li>{@code write "k:v:pt:kind;..."}: one commit of Java's core batch write, which on a postpone
 *       table writes the postpone bucket (kind: +I, -U, +U, -D);
 *   <li>{@code compact <default bucket num>}: what paimon-spark 2.0's SparkPostponeCompactProcedure
 *       does, with Paimon's own classes and without Spark: the postpone files' rows (with their
 *       kinds) through a merge-tree writer into the buckets PostponeUtils assigns, real level-0
 *       buckets compacted, BucketFiles' messages committed as one COMPACT snapshot;
 *   <li>{@code read}: a batch read's rows [k, v, pt], sorted;
 *   <li>{@code files}: every live file: [partition pt, bucket, totalBuckets, level, minSeq, maxSeq,
 *       rowCount, file name], sorted.
 * </ul>
 */
public class PostponeDriver {
    private static final Identifier ID = Identifier.create("db", "t");

    public static void main(String[] args) throws Exception {
        DriverSupport.serve(args, PostponeDriver::batch);
    }

    /** A batch {"warehouse": ..., "commands": [{"op": ..., "arg": ...}, ...]}: one answer a command. */
    private static void batch(JsonNode input) throws Exception {
        Path warehouse = new Path(input.get("warehouse").asText());
        for (JsonNode cmd : input.get("commands")) {
            DriverSupport.answer(() -> {
                try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(warehouse))) {
                    return run(catalog, cmd.get("op").asText(), cmd.path("arg").asText(""));
                }
            });
        }
    }

    private static Object run(Catalog catalog, String op, String arg) throws Exception {
        switch (op) {
            case "create":
                return create(catalog, arg);
            case "write":
                return write((FileStoreTable) catalog.getTable(ID), arg);
            case "compact":
                return compact((FileStoreTable) catalog.getTable(ID), Integer.parseInt(arg));
            case "read":
                return read((FileStoreTable) catalog.getTable(ID));
            case "files":
                return files((FileStoreTable) catalog.getTable(ID));
            default:
                throw new IllegalArgumentException("unknown command " + op);
        }
    }

    private static String create(Catalog catalog, String options) throws Exception {
        catalog.createDatabase("db", true);
        Schema.Builder schema = Schema.newBuilder()
                .column("k", DataTypes.INT().notNull())
                .column("v", DataTypes.STRING())
                .column("pt", DataTypes.INT().notNull())
                .primaryKey("k", "pt")
                .partitionKeys("pt")
                .option("bucket", "-2");
        for (String kv : options.split(",")) {
            if (!kv.isEmpty()) {
                String[] p = kv.split("=", 2);
                schema.option(p[0], p[1]);
            }
        }
        catalog.createTable(ID, schema.build(), false);
        return "ok";
    }

    private static String write(FileStoreTable table, String rows) throws Exception {
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
            for (String row : rows.split(";")) {
                String[] f = row.split(":");
                write.write(GenericRow.ofKind(RowKind.fromShortString(f[3]), Integer.parseInt(f[0]),
                        BinaryString.fromString(f[1]), Integer.parseInt(f[2])));
            }
            commit.commit(write.prepareCommit());
        }
        return "ok";
    }

    /** SparkPostponeCompactProcedure.execute (paimon-spark 2.0), one process instead of Spark tasks. */
    private static Object compact(FileStoreTable table, int defaultParallelism) throws Exception {
        if (!table.latestSnapshot().isPresent()) {
            return "empty";
        }
        long snapshotId = table.latestSnapshot().get().id();
        PostponeUtils.PostponeBucketAssigner assigner =
                PostponeUtils.createPostponeBucketAssigner(table, snapshotId, defaultParallelism);
        FileStoreTable realTable = PostponeUtils.tableForPostponeCompact(table, 1, snapshotId);
        List<DataSplit> splits = table.newSnapshotReader().withSnapshot(snapshotId)
                .withBucket(BucketMode.POSTPONE_BUCKET).read().dataSplits();
        List<PostponeUtils.CompactBucket> level0 = PostponeUtils.getLevel0Buckets(table, snapshotId);
        if (splits.isEmpty() && level0.isEmpty()) {
            return "nothing";
        }
        TableWriteImpl<?> write = (TableWriteImpl<?>) realTable.newBatchWriteBuilder().newWrite();
        write.getWrite().withIgnoreNumBucketCheck(true);
        write.withWriteRestore(new FileSystemWriteRestore(realTable.coreOptions(), realTable.snapshotManager(),
                realTable.store().newScan(), realTable.store().newIndexFileHandler(), snapshotId));
        Map<Integer, RowKeyExtractor> extractors = new HashMap<>();
        Set<List<Object>> touched = new LinkedHashSet<>();
        Map<List<Object>, BinaryRow> partitions = new HashMap<>();
        TableRead read = table.newReadBuilder().newRead();
        for (DataSplit split : splits) {
            try (RecordReader<InternalRow> reader = read.createReader(split);
                    CloseableIterator<InternalRow> rows = reader.toCloseableIterator()) {
                while (rows.hasNext()) {
                    InternalRow row = rows.next();
                    BinaryRow partition = split.partition().copy();
                    int numBuckets = assigner.assign(partition);
                    RowKeyExtractor extractor = extractors.computeIfAbsent(numBuckets,
                            n -> table.copy(Collections.singletonMap("bucket", String.valueOf(n)))
                                    .createRowKeyExtractor());
                    extractor.setRecord(row);
                    int bucket = extractor.bucket();
                    write.write(row, bucket);
                    List<Object> key = List.of(partition.getInt(0), bucket);
                    touched.add(key);
                    partitions.put(key, partition);
                }
            }
        }
        for (PostponeUtils.CompactBucket b : level0) {
            List<Object> key = List.of(b.partition().getInt(0), b.bucket());
            touched.add(key);
            partitions.put(key, b.partition());
        }
        for (List<Object> key : touched) {
            write.compact(partitions.get(key), (Integer) key.get(1), false);
        }
        List<CommitMessage> messages = new ArrayList<>();
        for (DataSplit split : splits) {
            messages.add(new CommitMessageImpl(split.partition(), split.bucket(), split.totalBuckets(),
                    DataIncrement.emptyIncrement(), new CompactIncrement(split.dataFiles(),
                            Collections.<DataFileMeta>emptyList(), Collections.<DataFileMeta>emptyList())));
        }
        for (CommitMessage m : write.prepareCommit()) {
            CommitMessageImpl message = (CommitMessageImpl) m;
            messages.add(new CommitMessageImpl(message.partition(), message.bucket(),
                    assigner.assign(message.partition()), message.newFilesIncrement(),
                    message.compactIncrement()));
        }
        write.close();
        Map<List<Object>, BucketFiles> buckets = new LinkedHashMap<>();
        for (CommitMessage m : messages) {
            CommitMessageImpl message = (CommitMessageImpl) m;
            List<Object> key = List.of(message.partition().getInt(0), message.bucket());
            partitions.put(key, message.partition());
            buckets.computeIfAbsent(key, k -> new BucketFiles(table.store().pathFactory()
                    .createDataFilePathFactory(message.partition(), message.bucket()), table.fileIO()))
                    .update(message);
        }
        List<CommitMessage> finalMessages = new ArrayList<>();
        buckets.forEach((key, files) -> finalMessages.add(files.makeMessage(partitions.get(key), (Integer) key.get(1))));
        try (TableCommitImpl commit = realTable.newCommit(table.coreOptions().createCommitUser())) {
            commit.commit(finalMessages);
        }
        return "ok";
    }

    private static List<List<Object>> read(FileStoreTable table) throws Exception {
        ReadBuilder builder = table.newReadBuilder();
        List<List<Object>> out = new ArrayList<>();
        try (RecordReader<InternalRow> reader = builder.newRead().createReader(builder.newScan().plan());
                CloseableIterator<InternalRow> rows = reader.toCloseableIterator()) {
            while (rows.hasNext()) {
                InternalRow row = rows.next();
                out.add(List.of(row.getInt(0), row.isNullAt(1) ? "" : row.getString(1).toString(), row.getInt(2)));
            }
        }
        out.sort((a, b) -> a.get(2).equals(b.get(2)) ? Integer.compare((Integer) a.get(0), (Integer) b.get(0))
                : Integer.compare((Integer) a.get(2), (Integer) b.get(2)));
        return out;
    }

    private static List<List<Object>> files(FileStoreTable table) throws Exception {
        List<List<Object>> out = new ArrayList<>();
        for (ManifestEntry e : table.store().newScan().plan().files()) {
            DataFileMeta f = e.file();
            out.add(List.of(e.partition().getInt(0), e.bucket(), e.totalBuckets(), f.level(),
                    f.minSequenceNumber(), f.maxSequenceNumber(), f.rowCount(), f.fileName()));
        }
        out.sort((a, b) -> a.toString().compareTo(b.toString()));
        return out;
    }
}
