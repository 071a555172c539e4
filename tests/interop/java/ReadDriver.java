import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.InternalArray;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.fs.Path;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.ArrayType;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;

/**
 * Reads tables of a filesystem warehouse with whichever Java Paimon it is compiled against (1.0 or
 * 2.0, tests/oracles/paimon_java.py): the smoke check that a Paimon version reads what we wrote.
 *
 * <p>Usage: {@code java ReadDriver <warehouse> <db.table>...}: one JSON line per table,
 * {"snapshot": latest id, "fields": [names], "rows": [[v, ...], ...]}, values as JSON numbers,
 * booleans and lists (ARRAY), else their Paimon text ({"error": ...} when Java failed).
 */
public class ReadDriver {
    public static void main(String[] args) throws Exception {
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(new Path(args[0])))) {
            for (int i = 1; i < args.length; i++) {
                Identifier id = Identifier.fromString(args[i]);
                DriverSupport.answer(() -> read((FileStoreTable) catalog.getTable(id)));
            }
        }
    }

    private static Map<String, Object> read(FileStoreTable table) throws Exception {
        List<DataField> fields = table.rowType().getFields();
        List<String> names = new ArrayList<>();
        List<InternalRow.FieldGetter> getters = new ArrayList<>();
        for (int i = 0; i < fields.size(); i++) {
            names.add(fields.get(i).name());
            getters.add(InternalRow.createFieldGetter(fields.get(i).type(), i));
        }
        ReadBuilder builder = table.newReadBuilder();
        List<List<Object>> rows = new ArrayList<>();
        try (RecordReader<InternalRow> reader = builder.newRead().createReader(builder.newScan().plan())) {
            reader.forEachRemaining(row -> {
                List<Object> values = new ArrayList<>();
                for (int i = 0; i < getters.size(); i++) {
                    values.add(json(getters.get(i).getFieldOrNull(row), fields.get(i).type()));
                }
                rows.add(values);
            });
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("snapshot", table.snapshotManager().latestSnapshotId());
        out.put("fields", names);
        out.put("rows", rows);
        return out;
    }

    private static Object json(Object v, DataType type) {
        if (v == null || v instanceof Number || v instanceof Boolean) {
            return v;
        }
        if (v instanceof InternalArray) {
            DataType element = ((ArrayType) type).getElementType();
            InternalArray.ElementGetter getter = InternalArray.createElementGetter(element);
            List<Object> out = new ArrayList<>();
            for (int i = 0; i < ((InternalArray) v).size(); i++) {
                out.add(json(getter.getElementOrNull((InternalArray) v, i), element));
            }
            return out;
        }
        return String.valueOf(v);
    }
}
