import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.paimon.data.InternalMap;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.reader.RecordReader;
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

    interface Command {
        Object run() throws Exception;
    }

    private DriverSupport() {}

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
