import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.data.InternalMap;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataTypeRoot;

/**
 * What the command drivers share: running a command (its result printed as one JSON line, or,
 * when it throws, {"error": "<exception> <- <root cause>"} so the test sees Java's reason), and
 * reading a table's rows as JSON values. Compiled with each driver (tests/oracles/paimon_java.py compile_driver).
 */
final class DriverSupport {
    static final ObjectMapper JSON = new ObjectMapper();

    /** What a batch's answers end with when the driver serves batches from stdin. */
    static final String END = "--end--";

    interface Command {
        Object run() throws Exception;
    }

    interface Batch {
        void run(JsonNode input) throws Exception;
    }

    interface CatalogCommand {
        Object run(Catalog catalog, JsonNode cmd) throws Exception;
    }

    private DriverSupport() {}

    /**
     * A driver's input: {@code <file.json>} runs that one batch; {@code -} runs batches from stdin,
     * one JSON document a line, each answered by its result lines and then a line {@link #END}, until
     * stdin closes (one JVM for many batches: its start-up, seconds, is most of a batch's cost).
     */
    static void serve(String[] args, Batch batch) throws Exception {
        if (!args[0].equals("-")) {
            batch.run(JSON.readTree(Files.readAllBytes(Paths.get(args[0]))));
            return;
        }
        for (String line = stdin().readLine(); line != null; line = stdin().readLine()) {
            if (!line.isBlank()) {
                batch.run(JSON.readTree(line));
                System.out.println(END);
                System.out.flush();
            }
        }
    }

    /**
     * {@link #serve} for a driver whose batches, {"warehouse": W, "commands": [...]}, run on one
     * filesystem catalog over W (with the catalog options {@code options}, key then value): each
     * command answered in order.
     */
    static void serveOnWarehouse(String[] args, CatalogCommand command, String... options) throws Exception {
        serve(args, input -> {
            Options catalogOptions = new Options();
            catalogOptions.set("warehouse", input.get("warehouse").asText());
            for (int i = 0; i + 1 < options.length; i += 2) {
                catalogOptions.set(options[i], options[i + 1]);
            }
            try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(catalogOptions))) {
                for (JsonNode cmd : input.get("commands")) {
                    answer(() -> command.run(catalog, cmd));
                }
            }
        });
    }

    /** A command's table options: {@code defaults} (key then value), then its {"options": {...}}. */
    static Map<String, String> tableOptions(JsonNode cmd, String... defaults) {
        Map<String, String> out = new TreeMap<>();
        for (int i = 0; i + 1 < defaults.length; i += 2) {
            out.put(defaults[i], defaults[i + 1]);
        }
        cmd.path("options").fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }

    private static BufferedReader stdin;

    private static synchronized BufferedReader stdin() {
        if (stdin == null) {
            stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        }
        return stdin;
    }

    /** Waits for the next line on stdin: what a test sends to end a command that holds something. */
    static void awaitRelease() throws IOException {
        stdin().readLine();
    }

    static void answer(Command command) throws Exception {
        Object result;
        try {
            result = command.run();
        } catch (Exception e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            result = Map.of("error", e + (root == e ? "" : " <- " + root));
        }
        System.out.println(JSON.writeValueAsString(result));
        System.out.flush();
    }

    /** A table's rows, each a list of its values: numbers, epoch millis for TIMESTAMP_LTZ, maps, else text. */
    static List<List<Object>> rows(Table table) throws Exception {
        List<DataField> fields = table.rowType().getFields();
        ReadBuilder builder = table.newReadBuilder();
        List<List<Object>> out = new ArrayList<>();
        try (RecordReader<InternalRow> reader = builder.newRead().createReader(builder.newScan().plan())) {
            reader.forEachRemaining(row -> {
                List<Object> values = new ArrayList<>();
                for (int i = 0; i < fields.size(); i++) {
                    values.add(row.isNullAt(i) ? null : value(row, i, fields.get(i).type().getTypeRoot()));
                }
                out.add(values);
            });
        }
        return out;
    }

    private static Object value(InternalRow row, int i, DataTypeRoot root) {
        switch (root) {
            case BIGINT: return row.getLong(i);
            case INTEGER: return row.getInt(i);
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE: return row.getTimestamp(i, 3).getMillisecond();
            case MAP: {
                InternalMap map = row.getMap(i);
                Map<String, String> out = new TreeMap<>();
                for (int k = 0; k < map.size(); k++) {
                    out.put(map.keyArray().getString(k).toString(),
                            map.valueArray().isNullAt(k) ? null : map.valueArray().getString(k).toString());
                }
                return out;
            }
            default: return row.getString(i).toString();
        }
    }
}
