import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.options.Options;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.table.FormatTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.types.DataField;

/**
 * Drives Java Paimon's HiveCatalog on format tables for tests/interop/test_format_table_interop.py.
 *
 * <p>Usage: {@code java FormatTableDriver <batch.json> | -} (DriverSupport.serve): a batch is
 * {"uri": metastore, "warehouse": W, "commands": [...]}, run on one HiveCatalog, one JSON line per command:
 *
 * <pre>
 * {"op": "describe", "table": T} -> {class, format, location, partitionKeys, fields: [[name, type]], fieldDelimiter,
 *                                   comment}
 * {"op": "list", "database": D}  -> [tables]
 * </pre>
 *
 * <p>(The 1.0 snapshot the bundle holds cannot create a format table: its createTable takes
 * 'type' = 'format-table' for a data table and finds no csv FileFormat. Hive's own tables stand in.)
 */
public class FormatTableDriver {
    public static void main(String[] args) throws Exception {
        DriverSupport.serve(args, FormatTableDriver::batch);
    }

    private static void batch(JsonNode input) throws Exception {
        Map<String, String> options = new HashMap<>();
        options.put("metastore", "hive");
        options.put("uri", input.get("uri").asText());
        options.put("warehouse", input.get("warehouse").asText());
        options.put("format-table.enabled", "true"); // false by default in the 1.0 snapshot the bundle holds
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(Options.fromMap(options)))) {
            for (JsonNode cmd : input.get("commands")) {
                DriverSupport.answer(() -> run(catalog, cmd));
            }
        }
    }

    private static Object run(Catalog catalog, JsonNode cmd) throws Exception {
        String op = cmd.get("op").asText();
        switch (op) {
            case "describe":
                return describe(catalog.getTable(Identifier.fromString(cmd.get("table").asText())));
            case "list":
                return catalog.listTables(cmd.get("database").asText());
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static Map<String, Object> describe(Table table) {
        Map<String, Object> out = new HashMap<>();
        out.put("class", table instanceof FormatTable ? "FormatTable" : table.getClass().getSimpleName());
        if (table instanceof FormatTable) {
            FormatTable f = (FormatTable) table;
            out.put("format", f.format().name().toLowerCase());
            out.put("location", f.location());
        }
        out.put("partitionKeys", table.partitionKeys());
        List<List<String>> fields = new ArrayList<>();
        for (DataField field : table.rowType().getFields()) {
            List<String> pair = new ArrayList<>();
            pair.add(field.name());
            pair.add(field.type().toString());
            fields.add(pair);
        }
        out.put("fields", fields);
        // the key is 'field-delimiter' in 1.0.0, 'csv.field-delimiter' in the bundle's 1.0 snapshot
        Map<String, String> options = table.options();
        out.put("fieldDelimiter", options.getOrDefault("field-delimiter", options.get("csv.field-delimiter")));
        out.put("comment", table.comment().orElse(null));
        return out;
    }
}
