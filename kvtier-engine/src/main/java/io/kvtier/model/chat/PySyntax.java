package io.kvtier.model.chat;

import java.util.ArrayList;
import java.util.List;

/**
 * Rewrites the two pieces of Jinja2 expression syntax that Jinjava's parser reads differently,
 * inside one tag body, before Jinjava parses it (the parser is not an extension point; the
 * semantics behind the rewritten forms are: {@code py_slice} is a filter of {@link ChatTemplate}).
 * <ul>
 *   <li>Extended slices {@code x[a:b:c]} (Qwen3's {@code messages[::-1]}) become
 *       {@code (x|py_slice(a, b, c))}, empty parts {@code none}; Jinjava parses only {@code [a:b]}.
 *   <li>Keyword arguments whose value is an expression ({@code namespace(i=messages|length - 1)})
 *       get the value parenthesised ({@code i=(messages|length - 1)}): Jinjava binds {@code =}
 *       tighter than filters and operators, so it applied {@code |length - 1} to the named
 *       parameter itself.
 * </ul>
 * String literals are left alone; line breaks are kept, so error line numbers still match the source.
 */
final class PySyntax {

    private PySyntax() {
    }

    static String expression(String body) {
        String s = body;
        for (String next = slice(s); next != null; next = slice(s)) {
            s = next;
        }
        String head = s.strip();
        if (head.startsWith("macro ") || head.startsWith("call") || head.startsWith("-macro") || head.startsWith("- macro")) {
            return s; // parameter lists with defaults, not calls
        }
        return keywordArguments(s);
    }

    /** {@code s} with its first extended slice rewritten, or null when it has none. */
    private static String slice(String s) {
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            if (NotPrecedence.isQuote(c)) {
                k = NotPrecedence.stringEnd(s, k);
            } else if (c == '[') {
                int end = matching(s, k);
                if (end < 0) {
                    return null;
                }
                List<String> parts = topLevelSplit(s.substring(k + 1, end), ':');
                if (parts.size() == 3) {
                    int start = operandStart(s, k);
                    if (start == k) {
                        continue; // a list literal, not a subscript
                    }
                    StringBuilder args = new StringBuilder();
                    for (String p : parts) {
                        args.append(args.isEmpty() ? "" : ", ").append(p.isBlank() ? "none" : p.strip());
                    }
                    return s.substring(0, start) + "(" + s.substring(start, k) + "|py_slice(" + args + "))"
                            + s.substring(end + 1);
                }
            }
        }
        return null;
    }

    /** Where the postfix expression ending just before {@code bracket} starts (names, dots, calls, subscripts, a string). */
    private static int operandStart(String s, int bracket) {
        int k = bracket - 1;
        while (k >= 0) {
            char c = s.charAt(k);
            if (Character.isJavaIdentifierPart(c) || c == '.') {
                k--;
            } else if (c == ')' || c == ']') {
                int open = opening(s, k);
                if (open < 0) {
                    return bracket;
                }
                k = open - 1;
            } else if (NotPrecedence.isQuote(c) && k == bracket - 1) {
                int q = s.lastIndexOf(c, k - 1);
                if (q < 0) {
                    return bracket;
                }
                k = q - 1;
            } else {
                break;
            }
        }
        return k + 1;
    }

    private static int opening(String s, int close) {
        char want = s.charAt(close) == ')' ? '(' : '[';
        char self = s.charAt(close);
        int depth = 0;
        for (int k = close; k >= 0; k--) {
            char c = s.charAt(k);
            if (c == self) {
                depth++;
            } else if (c == want && --depth == 0) {
                return k;
            }
        }
        return -1;
    }

    /** Index of the bracket closing the one at {@code open}, skipping strings; -1 when unbalanced. */
    private static int matching(String s, int open) {
        int depth = 0;
        for (int k = open; k < s.length(); k++) {
            char c = s.charAt(k);
            if (NotPrecedence.isQuote(c)) {
                k = NotPrecedence.stringEnd(s, k);
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if ((c == ')' || c == ']' || c == '}') && --depth == 0) {
                return k;
            }
        }
        return -1;
    }

    /** {@code s} cut at {@code sep} where it is outside brackets and strings. */
    private static List<String> topLevelSplit(String s, char sep) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        int from = 0;
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            if (NotPrecedence.isQuote(c)) {
                k = NotPrecedence.stringEnd(s, k);
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                depth--;
            } else if (c == sep && depth == 0) {
                out.add(s.substring(from, k));
                from = k + 1;
            }
        }
        out.add(s.substring(from));
        return out;
    }

    /** Every call's {@code name=value} arguments with the value parenthesised. */
    private static String keywordArguments(String s) {
        List<int[]> wraps = new ArrayList<>(); // [start, end) of each value
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            if (NotPrecedence.isQuote(c)) {
                k = NotPrecedence.stringEnd(s, k);
            } else if (c == '(' && isCall(s, k)) {
                int end = matching(s, k);
                if (end < 0) {
                    break;
                }
                int argStart = k + 1;
                for (String arg : topLevelSplit(s.substring(k + 1, end), ',')) {
                    int eq = keywordEquals(arg);
                    if (eq >= 0) {
                        wraps.add(new int[] {argStart + eq + 1, argStart + arg.length()});
                    }
                    argStart += arg.length() + 1;
                }
            }
        }
        StringBuilder sb = new StringBuilder(s);
        // Right to left by position so earlier insertions stay where they were computed.
        List<int[]> inserts = new ArrayList<>();
        for (int[] w : wraps) {
            inserts.add(new int[] {w[1], ')'});
            inserts.add(new int[] {w[0], '('});
        }
        inserts.sort((a, b) -> a[0] != b[0] ? Integer.compare(b[0], a[0]) : Integer.compare(a[1], b[1]));
        for (int[] in : inserts) {
            sb.insert(in[0], (char) in[1]);
        }
        return sb.toString();
    }

    /** A '(' right after a name or a closing bracket is a call (else it groups). */
    private static boolean isCall(String s, int paren) {
        int k = paren - 1;
        while (k >= 0 && s.charAt(k) == ' ') k--;
        if (k < 0) {
            return false;
        }
        char c = s.charAt(k);
        if (c == ')' || c == ']') {
            return true;
        }
        if (!Character.isJavaIdentifierPart(c)) {
            return false;
        }
        int w = k;
        while (w >= 0 && Character.isJavaIdentifierPart(s.charAt(w))) w--;
        String word = s.substring(w + 1, k + 1);
        // After an operator word the parenthesis groups: `not (a)`, `if (x)`.
        return !List.of("not", "and", "or", "in", "is", "if", "else", "elif", "for", "set").contains(word);
    }

    /** The index of the '=' in {@code " name = value"}, or -1 when the argument is positional. */
    private static int keywordEquals(String arg) {
        int k = 0;
        while (k < arg.length() && Character.isWhitespace(arg.charAt(k))) k++;
        int name = k;
        while (k < arg.length() && Character.isJavaIdentifierPart(arg.charAt(k))) k++;
        if (k == name || !Character.isJavaIdentifierStart(arg.charAt(name))) {
            return -1;
        }
        while (k < arg.length() && arg.charAt(k) == ' ') k++;
        boolean single = k < arg.length() && arg.charAt(k) == '=' && (k + 1 == arg.length() || arg.charAt(k + 1) != '=');
        return single ? k : -1;
    }

    /**
     * Python's {@code seq[start:stop:step]} ({@code args} = start, stop, step; null for an empty
     * part) on a list, any other iterable (as a list) or a string.
     *
     * @throws IllegalArgumentException when the step is 0
     */
    static Object applySlice(Object seq, Object[] args) {
        List<Object> items = new ArrayList<>();
        if (seq instanceof String str) {
            str.codePoints().forEach(cp -> items.add(Character.toString(cp)));
        } else if (seq instanceof Iterable<?> it) {
            it.forEach(items::add);
        } else if (seq == null) {
            return List.of();
        } else {
            throw new IllegalArgumentException("cannot slice a " + seq.getClass().getSimpleName());
        }
        int n = items.size();
        long step = arg(args, 2, 1);
        if (step == 0) {
            throw new IllegalArgumentException("slice step cannot be zero");
        }
        long lo = step > 0 ? 0 : -1;
        long hi = step > 0 ? n : n - 1;
        long start = given(args, 0) ? bound(arg(args, 0, 0), n, lo, hi) : step > 0 ? lo : hi;
        long stop = given(args, 1) ? bound(arg(args, 1, 0), n, lo, hi) : step > 0 ? hi : lo;
        List<Object> out = new ArrayList<>();
        for (long i = start; step > 0 ? i < stop : i > stop; i += step) {
            out.add(items.get((int) i));
        }
        if (seq instanceof String) {
            StringBuilder sb = new StringBuilder();
            out.forEach(sb::append);
            return sb.toString();
        }
        return out;
    }

    private static boolean given(Object[] args, int i) {
        return i < args.length && args[i] != null;
    }

    private static long arg(Object[] args, int i, long dflt) {
        return i < args.length && args[i] != null ? ((Number) args[i]).longValue() : dflt;
    }

    /** A start or stop given by the template: negative counts from the end, then clamped to [lo, hi]. */
    private static long bound(long v, int n, long lo, long hi) {
        if (v < 0) {
            v += n;
        }
        return Math.max(lo, Math.min(hi, v));
    }
}
