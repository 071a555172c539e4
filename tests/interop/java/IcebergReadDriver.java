import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

/**
 * Apache Iceberg's Java library (the reference implementation) reading a table by its metadata
 * JSON, for tests/interop/test_iceberg_readers.py: a reader of the Iceberg metadata paimon-sql
 * writes that applies position deletes and format-v3 deletion vectors (a blob at
 * {@code content_offset} of its file) as Spark, Flink and Trino with Iceberg do. It needs no
 * Paimon classes: it is compiled on its own (tests/oracles/iceberg_java.py).
 *
 * <p>Usage: {@code java IcebergReadDriver -}: each stdin line is one request, answered by JSON
 * lines and then a line {@code --end--} (as DriverSupport.serve answers, so tests/interop/java_paimon.py's
 * Driver speaks to it). A request that fails is answered by {"error": "<exception>"}.
 *
 * <pre>
 * {"op": "read", "metadata": M}                   the current snapshot's rows, one JSON array a line,
 *                                                 in the order of the snapshot's schema
 * {"op": "read", "metadata": M, "snapshot": S}    the rows of snapshot S (with its own schema)
 * {"op": "read", "metadata": M, "ref": R}         the rows of the snapshot ref R (tag or branch) names
 * {"op": "read", ..., "lineage": true}           each row followed by its _row_id and
 *                                                 _last_updated_sequence_number (row lineage, format
 *                                                 version 3, Iceberg 1.9+)
 * {"op": "refs", "metadata": M}                   {"current": S, "snapshots": [S...], "refs": {R: {"type", "snapshot"}}}
 * </pre>
 */
public final class IcebergReadDriver {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String END = "--end--";

    private IcebergReadDriver() {}

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank()) {
                continue;
            }
            try {
                answer(JSON.readTree(line));
            } catch (Exception e) {
                Throwable root = e;
                while (root.getCause() != null) {
                    root = root.getCause();
                }
                Map<String, String> error = new LinkedHashMap<>();
                error.put("error", e + (root == e ? "" : " <- " + root));
                System.out.println(JSON.writeValueAsString(error));
            }
            System.out.println(END);
            System.out.flush();
        }
    }

    private static void answer(JsonNode request) throws Exception {
        HadoopFileIO io = new HadoopFileIO(new Configuration());
        String metadata = request.get("metadata").asText();
        Table table = new BaseTable(new StaticTableOperations(metadata, io), metadata);
        String op = request.get("op").asText();
        if (op.equals("refs")) {
            System.out.println(JSON.writeValueAsString(refs(table)));
        } else if (op.equals("read")) {
            IcebergGenerics.ScanBuilder scan = IcebergGenerics.read(table);
            Schema schema = table.schema();
            if (request.has("snapshot") || request.has("ref")) {
                long id = request.has("snapshot") ? request.get("snapshot").asLong() : refSnapshot(table, request);
                scan = scan.useSnapshot(id);
                schema = table.schemas().get(table.snapshot(id).schemaId());
            }
            List<Types.NestedField> columns = new ArrayList<>(schema.columns());  // not the _pos a delete needs
            if (request.path("lineage").asBoolean(false)) {
                columns.add(MetadataColumns.metadataColumn(table, "_row_id"));
                columns.add(MetadataColumns.metadataColumn(table, "_last_updated_sequence_number"));
                scan = scan.project(new Schema(columns));
            }
            try (CloseableIterable<Record> records = scan.build()) {
                for (Record record : records) {
                    List<Object> row = new ArrayList<>();
                    for (Types.NestedField field : columns) {
                        row.add(value(record.getField(field.name())));
                    }
                    System.out.println(JSON.writeValueAsString(row));
                }
            }
        } else {
            throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static long refSnapshot(Table table, JsonNode request) {
        SnapshotRef ref = table.refs().get(request.get("ref").asText());
        if (ref == null) {
            throw new IllegalArgumentException("no ref " + request.get("ref").asText());
        }
        return ref.snapshotId();
    }

    private static Map<String, Object> refs(Table table) {
        Map<String, Object> out = new LinkedHashMap<>();
        Snapshot current = table.currentSnapshot();
        out.put("current", current == null ? null : current.snapshotId());
        List<Long> snapshots = new ArrayList<>();
        table.snapshots().forEach(s -> snapshots.add(s.snapshotId()));
        out.put("snapshots", snapshots);
        Map<String, Object> refs = new LinkedHashMap<>();
        table.refs().forEach((name, ref) -> {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("type", ref.isTag() ? "tag" : "branch");
            r.put("snapshot", ref.snapshotId());
            refs.put(name, r);
        });
        out.put("refs", refs);
        return out;
    }

    /** JSON's own numbers, strings and booleans as they are; anything else as its text. */
    private static Object value(Object v) {
        if (v == null || v instanceof Number || v instanceof String || v instanceof Boolean) {
            return v;
        }
        return v.toString();
    }
}
