import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.fs.FileStatus;
import org.apache.paimon.fs.Path;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.StreamTableScan;
import org.apache.paimon.table.source.TableScan;
import org.apache.paimon.types.DataTypes;

/**
 * What Java Paimon does with the holes {@code fastForward} leaves in main's snapshot ids: main is
 * rolled back below the branch's first snapshot, so main ends as [1, 4, 5, 6]. Each reader is then
 * asked across the hole.
 *
 * <p>Sequence on {@code db.t} (k INT primary key, v INT, bucket 1, plus the table options given as
 * {@code key=value} arguments): commits 1..4 write (i, 10 * i); tag {@code t4} on 4; branch
 * {@code b} from it; the branch commits (5, 50) and (6, 60) as snapshots 5 and 6; main rolls back
 * to snapshot 1; main fast-forwards to {@code b}.
 *
 * <p>Usage: {@code java FastForwardDriver <warehouse> [key=value]...}: one JSON line per step,
 * {"what": step, "result": ...} or {"what": step, "error": "<exception> <- <root cause>"} (first line
 * of each message). Steps: state, snapshot-N (rows of snapshot N), latest, incremental-* (rows of
 * {@code incremental-between}), snapshots-table (the snapshot_id column of {@code t$snapshots}),
 * stream-from-1 (successive plans of a stream scan from snapshot 1), compacted-full (rows of
 * {@code scan.mode = compacted-full}), expire-first-kept-in-hole (retain-min 4: the first id to keep,
 * 3, is in the hole), expire-max-deletes-1, expire (retain-max 2), each with the state after it, and
 * snapshots-table-after-expire.
 */
public class FastForwardDriver {
    private static final int STREAM_PLANS = 40; // NextSnapshotFetcher checks the range every 16 misses

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            options.put(kv[0], kv[1]);
        }
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(new Path(args[0])))) {
            FileStoreTable main = build(catalog, options);
            step("state", () -> state(main));
            for (long id = 1; id <= 6; id++) {
                long sid = id;
                step("snapshot-" + id, () -> rows(main.copy(Map.of("scan.snapshot-id", String.valueOf(sid)))));
            }
            step("latest", () -> rows(main));
            step("incremental-1,5", () -> rows(main.copy(Map.of("incremental-between", "1,5"))));
            step("incremental-1,5-diff", () -> rows(main.copy(Map.of(
                    "incremental-between", "1,5", "incremental-between-scan-mode", "diff"))));
            step("incremental-4,6", () -> rows(main.copy(Map.of("incremental-between", "4,6"))));
            step("snapshots-table", () -> snapshotIds(catalog));
            step("stream-from-1", () -> stream(main.copy(Map.of(
                    "scan.mode", "from-snapshot", "scan.snapshot-id", "1"))));
            step("compacted-full", () -> rows(main.copy(Map.of("scan.mode", "compacted-full"))));
            step("expire-first-kept-in-hole", () -> expire(main, 4, 4, Integer.MAX_VALUE));
            step("expire-max-deletes-1", () -> expire(main, 2, 1, 1));
            step("expire", () -> expire(main, 2, 1, Integer.MAX_VALUE));
            step("snapshots-table-after-expire", () -> snapshotIds(catalog));
        }
    }

    private static FileStoreTable build(Catalog catalog, Map<String, String> options) throws Exception {
        catalog.createDatabase("db", false);
        Identifier id = Identifier.create("db", "t");
        catalog.createTable(id, Schema.newBuilder().column("k", DataTypes.INT().notNull()).column("v", DataTypes.INT())
                .primaryKey("k").option("bucket", "1").options(options).build(), false);
        FileStoreTable main = (FileStoreTable) catalog.getTable(id);
        for (int i = 1; i <= 4; i++) {
            commit(main, i);
        }
        main.createTag("t4", 4);
        main.createBranch("b", "t4");
        FileStoreTable branch = main.switchToBranch("b");
        commit(branch, 5);
        commit(branch, 6);
        main.rollbackTo(1);
        main.fastForward("b");
        return (FileStoreTable) catalog.getTable(id);
    }

    private static void commit(Table table, int i) throws Exception {
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        try (BatchTableWrite write = builder.newWrite(); BatchTableCommit commit = builder.newCommit()) {
            write.write(GenericRow.of(i, 10 * i));
            commit.commit(write.prepareCommit());
        }
    }

    private static void step(String what, DriverSupport.Command command) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("what", what);
        try {
            out.put("result", command.run());
        } catch (Exception e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            out.put("error", firstLine(e) + (root == e ? "" : " <- " + firstLine(root)));
        }
        System.out.println(DriverSupport.JSON.writeValueAsString(out));
        System.out.flush();
    }

    private static String firstLine(Throwable t) {
        return t.toString().split("\n", 2)[0];
    }

    /** Main's snapshot files as listed, what the snapshot manager calls earliest and latest, and the hints. */
    private static Map<String, Object> state(FileStoreTable table) throws Exception {
        Path dir = table.snapshotManager().snapshotDirectory();
        List<Long> ids = new ArrayList<>();
        Map<String, Object> hints = new LinkedHashMap<>();
        for (FileStatus status : table.fileIO().listStatus(dir)) {
            String name = status.getPath().getName();
            if (name.startsWith("snapshot-")) {
                ids.add(Long.parseLong(name.substring("snapshot-".length())));
            } else if (name.equals("EARLIEST") || name.equals("LATEST")) {
                hints.put(name, Long.parseLong(table.fileIO().readFileUtf8(status.getPath()).trim()));
            }
        }
        ids.sort(null);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("ids", ids);
        out.put("earliest", table.snapshotManager().earliestSnapshotId());
        out.put("latest", table.snapshotManager().latestSnapshotId());
        out.put("hints", hints);
        return out;
    }

    /** Expiry with these bounds, every snapshot old enough: how many it expired, then the state. */
    private static Map<String, Object> expire(FileStoreTable table, int retainMax, int retainMin, int maxDeletes)
            throws Exception {
        ExpireConfig config = ExpireConfig.builder().snapshotRetainMax(retainMax).snapshotRetainMin(retainMin)
                .snapshotMaxDeletes(maxDeletes).snapshotTimeRetain(Duration.ZERO).build();
        int expired = table.newExpireSnapshots().config(config).expire();
        Map<String, Object> out = state(table);
        out.put("expired", expired);
        return out;
    }

    /** A batch read's (k, v) rows, sorted. */
    private static List<List<Integer>> rows(Table table) throws Exception {
        ReadBuilder builder = table.newReadBuilder();
        return read(builder, builder.newScan().plan());
    }

    private static List<List<Integer>> read(ReadBuilder builder, TableScan.Plan plan) throws Exception {
        List<List<Integer>> out = new ArrayList<>();
        try (RecordReader<InternalRow> reader = builder.newRead().createReader(plan)) {
            reader.forEachRemaining(row -> out.add(List.of(row.getInt(0), row.getInt(1))));
        }
        out.sort((a, b) -> Integer.compare(a.get(0), b.get(0)));
        return out;
    }

    private static List<Long> snapshotIds(Catalog catalog) throws Exception {
        Table table = catalog.getTable(Identifier.fromString("db.t$snapshots"));
        ReadBuilder builder = table.newReadBuilder().withProjection(new int[] {0});
        List<Long> out = new ArrayList<>();
        try (RecordReader<InternalRow> reader = builder.newRead().createReader(builder.newScan().plan())) {
            reader.forEachRemaining(row -> out.add(row.getLong(0)));
        }
        return out;
    }

    /**
     * Successive plans of a stream scan until it throws or {@link #STREAM_PLANS} plans: each as its
     * class, the snapshot it read (-1 for none), its rows and the next snapshot the scan checkpoints;
     * consecutive empty plans are collapsed into one entry with a count.
     */
    private static List<Map<String, Object>> stream(Table table) throws Exception {
        ReadBuilder builder = table.newReadBuilder();
        StreamTableScan scan = builder.newStreamScan();
        List<Map<String, Object>> plans = new ArrayList<>();
        Map<String, Object> last = null;
        for (int i = 0; i < STREAM_PLANS; i++) {
            Map<String, Object> entry = new LinkedHashMap<>();
            try {
                TableScan.Plan plan = scan.plan();
                entry.put("plan", plan.getClass().getSimpleName());
                entry.put("rows", read(builder, plan));
                entry.put("next", scan.checkpoint());
            } catch (Exception e) {
                entry.put("error", firstLine(e));
                plans.add(entry);
                break;
            }
            if (last != null && last.get("plan").equals(entry.get("plan")) && ((List<?>) entry.get("rows")).isEmpty()
                    && ((List<?>) last.get("rows")).isEmpty() && last.get("next").equals(entry.get("next"))) {
                last.put("times", (int) last.getOrDefault("times", 1) + 1);
                continue;
            }
            plans.add(entry);
            last = entry;
        }
        return plans;
    }
}
