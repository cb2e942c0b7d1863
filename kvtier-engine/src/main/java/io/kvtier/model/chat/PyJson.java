package io.kvtier.model.chat;

import java.util.Iterator;
import java.util.Map;

/**
 * JSON as Python's {@code json.dumps(x, ensure_ascii=False, indent=indent)} writes it, which is
 * what Hugging Face's {@code tojson} filter (and so every chat template) produces: {@code ", "}
 * and {@code ": "} separators without indent, {@code ","} and newlines with it; non-ASCII kept;
 * control characters as {@code \\uXXXX}; keys in insertion order.
 */
final class PyJson {

    private PyJson() {
    }

    static String dumps(Object value, Integer indent) {
        StringBuilder sb = new StringBuilder();
        write(sb, value, indent, 0);
        return sb.toString();
    }

    private static void write(StringBuilder sb, Object v, Integer indent, int depth) {
        switch (v) {
            case null -> sb.append("null");
            case Boolean b -> sb.append(b ? "true" : "false");
            case Double d -> sb.append(pyFloat(d));
            case Float f -> sb.append(pyFloat(f.doubleValue()));
            case Number n -> sb.append(n);
            case CharSequence s -> string(sb, s.toString());
            case Map<?, ?> m -> container(sb, '{', '}', m.entrySet().iterator(), indent, depth);
            case Iterable<?> it -> container(sb, '[', ']', it.iterator(), indent, depth);
            case Object[] a -> container(sb, '[', ']', java.util.Arrays.asList(a).iterator(), indent, depth);
            default -> string(sb, v.toString());
        }
    }

    private static void container(StringBuilder sb, char open, char close, Iterator<?> it, Integer indent, int depth) {
        sb.append(open);
        if (!it.hasNext()) {
            sb.append(close);
            return;
        }
        boolean first = true;
        while (it.hasNext()) {
            Object e = it.next();
            if (!first) sb.append(indent == null ? ", " : ",");
            first = false;
            newline(sb, indent, depth + 1);
            if (e instanceof Map.Entry<?, ?> kv) {
                string(sb, String.valueOf(kv.getKey()));
                sb.append(": ");
                write(sb, kv.getValue(), indent, depth + 1);
            } else {
                write(sb, e, indent, depth + 1);
            }
        }
        newline(sb, indent, depth);
        sb.append(close);
    }

    private static void newline(StringBuilder sb, Integer indent, int depth) {
        if (indent != null) {
            sb.append('\n').append(" ".repeat(indent * depth));
        }
    }

    private static String pyFloat(double d) {
        if (Double.isNaN(d)) return "NaN";
        if (Double.isInfinite(d)) return d > 0 ? "Infinity" : "-Infinity";
        return d == Math.rint(d) && Math.abs(d) < 1e16 ? String.valueOf((long) d) + ".0" : String.valueOf(d);
    }

    private static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
                    else sb.append(c);
                }
            }
        }
        sb.append('"');
    }
}
