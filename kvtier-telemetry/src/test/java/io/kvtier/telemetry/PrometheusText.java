package io.kvtier.telemetry;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A strict parser of the Prometheus text exposition format 0.0.4, written for the tests from the
 * format's specification (the prometheus-metrics library has writers only, no parser). It checks
 * what a scraper checks: every sample belongs to a family declared by a {@code # TYPE} line before
 * it (in format 0.0.4 a counter's family is declared under its {@code _total} name, a
 * histogram's samples end in {@code _bucket}, {@code _sum} or {@code _count}), names match {@code [a-zA-Z_:][a-zA-Z0-9_:]*}, label values are quoted with
 * {@code \\}, {@code \"} and {@code \n} escapes, and values are numbers (or {@code +Inf}, {@code -Inf},
 * {@code NaN}). Anything else throws IllegalArgumentException naming the line.
 */
public final class PrometheusText {

    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private final Map<String, String> types = new LinkedHashMap<>();
    private final List<Sample> samples = new ArrayList<>();

    private PrometheusText() {
    }

    public static PrometheusText parse(String text) {
        PrometheusText p = new PrometheusText();
        int n = 0;
        for (String line : text.split("\n", -1)) {
            n++;
            if (line.isEmpty()) {
                continue;
            }
            try {
                p.line(line);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("line " + n + " '" + line + "': " + e.getMessage(), e);
            }
        }
        return p;
    }

    /** Family name to type ({@code counter}, {@code gauge}, {@code histogram}, ...), in order. */
    public Map<String, String> types() {
        return types;
    }

    public List<Sample> samples() {
        return samples;
    }

    /**
     * The value of the one sample named {@code name} whose labels include {@code labels} (pairs).
     *
     * @throws IllegalArgumentException if none or several match
     */
    public double value(String name, String... labels) {
        List<Sample> m = matching(name, labels);
        if (m.size() != 1) {
            throw new IllegalArgumentException(m.size() + " samples match " + name + " " + List.of(labels) + ": " + m);
        }
        return m.getFirst().value();
    }

    /** The value of the matching sample, or {@code orElse} when there is none. */
    public double valueOr(double orElse, String name, String... labels) {
        List<Sample> m = matching(name, labels);
        return m.isEmpty() ? orElse : value(name, labels);
    }

    public List<Sample> matching(String name, String... labels) {
        List<Sample> out = new ArrayList<>();
        for (Sample s : samples) {
            if (!s.name().equals(name)) {
                continue;
            }
            boolean ok = true;
            for (int i = 0; i < labels.length; i += 2) {
                ok &= labels[i + 1].equals(s.labels().get(labels[i]));
            }
            if (ok) {
                out.add(s);
            }
        }
        return out;
    }

    private void line(String line) {
        if (line.startsWith("# HELP ")) {
            name(line.substring(7).split(" ", 2)[0]);
            return;
        }
        if (line.startsWith("# TYPE ")) {
            String[] f = line.substring(7).split(" ");
            if (f.length != 2 || !List.of("counter", "gauge", "histogram", "summary", "untyped").contains(f[1])) {
                throw new IllegalArgumentException("bad TYPE line");
            }
            if (types.put(name(f[0]), f[1]) != null) {
                throw new IllegalArgumentException("family declared twice");
            }
            return;
        }
        if (line.startsWith("#")) {
            return; // a comment
        }
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ') {
            i++;
        }
        String name = name(line.substring(0, i));
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i = labels(line, i + 1, labels);
        }
        if (i >= line.length() || line.charAt(i) != ' ') {
            throw new IllegalArgumentException("no value");
        }
        String[] rest = line.substring(i + 1).split(" ");
        double v = switch (rest[0]) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(rest[0]);
        };
        checkFamily(name);
        samples.add(new Sample(name, labels, v));
    }

    private int labels(String line, int i, Map<String, String> out) {
        while (line.charAt(i) != '}') {
            int eq = line.indexOf('=', i);
            String label = line.substring(i, eq);
            if (!label.matches("[a-zA-Z_][a-zA-Z0-9_]*") || line.charAt(eq + 1) != '"') {
                throw new IllegalArgumentException("bad label at " + i);
            }
            StringBuilder v = new StringBuilder();
            int j = eq + 2;
            for (; line.charAt(j) != '"'; j++) {
                char c = line.charAt(j);
                if (c == '\\') {
                    char e = line.charAt(++j);
                    v.append(switch (e) {
                        case 'n' -> '\n';
                        case '\\', '"' -> e;
                        default -> throw new IllegalArgumentException("bad escape \\" + e);
                    });
                } else {
                    v.append(c);
                }
            }
            if (out.put(label, v.toString()) != null) {
                throw new IllegalArgumentException("label " + label + " twice");
            }
            i = j + 1;
            if (line.charAt(i) == ',') {
                i++;
            }
        }
        return i + 1;
    }

    private void checkFamily(String sample) {
        for (Map.Entry<String, String> t : types.entrySet()) {
            String f = t.getKey();
            List<String> names = switch (t.getValue()) {
                case "counter" -> List.of(f, f + "_total"); // 0.0.4 declares the _total name itself
                case "histogram" -> List.of(f + "_bucket", f + "_sum", f + "_count", f + "_created");
                case "summary" -> List.of(f, f + "_sum", f + "_count", f + "_created");
                default -> List.of(f);
            };
            if (names.contains(sample)) {
                return;
            }
        }
        throw new IllegalArgumentException("sample " + sample + " belongs to no declared family");
    }

    private static String name(String s) {
        if (!Objects.requireNonNull(s).matches("[a-zA-Z_:][a-zA-Z0-9_:]*")) {
            throw new IllegalArgumentException("bad metric name '" + s + "'");
        }
        return s;
    }
}
