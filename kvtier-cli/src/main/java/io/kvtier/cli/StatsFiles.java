package io.kvtier.cli;

import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A command's summary record written as JSON and as CSV: the CSV's columns are the JSON's leaf
 * fields, flattened with dots ({@code external_hit_tokens.disk}), so the two formats carry the
 * same fields by construction. Records are maps of strings, numbers, booleans, nested maps and
 * records (converted through Jackson). A field is a column even where it has no value in a run
 * (null, NaN: an empty cell), so that runs of one configuration share a header.
 */
public final class StatsFiles {

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The one printer of every JSON file kvtier writes, a record or a list of them (a sweep):
     * {@code "key": value}, two spaces a level, each array element on its own line (Jackson's
     * default printer writes {@code "key" : value} and {@code [ {}).
     */
    private static final ObjectWriter PRETTY = JSON.writer(new DefaultPrettyPrinter()
            .withSeparators(Separators.createDefaultInstance().withObjectFieldValueSpacing(Separators.Spacing.AFTER))
            .withObjectIndenter(new DefaultIndenter("  ", "\n"))
            .withArrayIndenter(new DefaultIndenter("  ", "\n")));

    private StatsFiles() {
    }

    /** Writes {@code value} (a record, or a list of records) as indented JSON ({@link #json}); parent folders are created. */
    public static void writeJson(Path file, Object value) throws IOException {
        createParent(file);
        PRETTY.writeValue(file.toFile(), value);
    }

    /** The JSON text of {@link #writeJson}. */
    public static String json(Object value) throws IOException {
        return PRETTY.writeValueAsString(value);
    }

    /**
     * Writes a header and one row per record: the union of the records' {@link #flatten flattened}
     * fields in first-seen order, an empty cell where a record lacks a field.
     */
    public static void writeCsv(Path file, List<? extends Map<String, ?>> records) throws IOException {
        createParent(file);
        Files.writeString(file, csv(records), StandardCharsets.UTF_8);
    }

    /** The CSV text of {@link #writeCsv}. */
    public static String csv(List<? extends Map<String, ?>> records) {
        List<Map<String, Object>> flat = new ArrayList<>();
        Set<String> columns = new LinkedHashSet<>();
        for (Map<String, ?> r : records) {
            Map<String, Object> f = flatten(r);
            flat.add(f);
            columns.addAll(f.keySet());
        }
        StringBuilder b = new StringBuilder();
        row(b, new ArrayList<>(columns));
        for (Map<String, Object> f : flat) {
            List<Object> cells = new ArrayList<>();
            for (String c : columns) {
                cells.add(f.get(c));
            }
            row(b, cells);
        }
        return b.toString();
    }

    /**
     * The leaf fields of a record, nested maps and records flattened with dots, in order; a
     * {@code null} or NaN leaf is kept with a null value (an empty cell: no value, but the column
     * stays, e.g. {@code remote.off_reason} of a tier that never turned itself off).
     */
    public static Map<String, Object> flatten(Map<String, ?> record) {
        Map<String, Object> out = new LinkedHashMap<>();
        flatten("", JSON.convertValue(record, Map.class), out);
        return out;
    }

    @SuppressWarnings("unchecked")
    private static void flatten(String prefix, Map<String, Object> m, Map<String, Object> out) {
        for (Map.Entry<String, Object> e : m.entrySet()) {
            String key = prefix + e.getKey();
            Object v = e.getValue();
            if (v instanceof Map<?, ?> nested) {
                flatten(key + ".", (Map<String, Object>) nested, out);
            } else {
                boolean none = v == null || v instanceof Double d && d.isNaN() || v instanceof String s && s.equals("NaN");
                out.put(key, none ? null : v);
            }
        }
    }

    private static void row(StringBuilder b, List<?> cells) {
        for (int i = 0; i < cells.size(); i++) {
            b.append(i == 0 ? "" : ",").append(cell(cells.get(i)));
        }
        b.append('\n');
    }

    private static String cell(Object v) {
        if (v == null) {
            return "";
        }
        String s = v instanceof Double d ? String.format(Locale.ROOT, "%.6f", d) : v.toString();
        return s.contains(",") || s.contains("\"") || s.contains("\n") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }

    private static void createParent(Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
    }
}
