package io.kvtier.model.chat;

/**
 * Rewrites a Jinja template so Jinjava reads {@code not} as Jinja2 does. In Jinja2 {@code not}
 * binds more loosely than comparisons and tests ({@code not x is defined} is
 * {@code not (x is defined)}, {@code not a == b} is {@code not (a == b)}); Jinjava's expression
 * language binds it tightly. Inside every {@code {{ }}} and {@code {% %}}, each {@code not}
 * (other than the operators {@code not in} / {@code is not}) gets its operand parenthesised up to
 * the next {@code and}, {@code or}, {@code if}, {@code else}, comma or closing bracket at its
 * nesting level. String literals are left alone. {@link #rewrite} first applies {@link PySyntax}'s
 * rewrites to each tag body (one walk over the tags for both).
 */
final class NotPrecedence {

    private NotPrecedence() {
    }

    static String rewrite(String src) {
        return mapTags(src, body -> expression(PySyntax.expression(body)));
    }

    /** {@code src} with the body of every {@code {{ }}} and {@code {% %}} replaced by {@code f} of it. */
    static String mapTags(String src, java.util.function.UnaryOperator<String> f) {
        StringBuilder out = new StringBuilder(src.length() + 64);
        int i = 0;
        while (i < src.length()) {
            int open = nextTagOpen(src, i);
            if (open < 0) {
                out.append(src, i, src.length());
                break;
            }
            String close = src.charAt(open + 1) == '{' ? "}}" : "%}";
            int end = closeOf(src, open + 2, close);
            if (end < 0) {
                out.append(src, i, src.length());
                break;
            }
            out.append(src, i, open + 2);
            out.append(f.apply(src.substring(open + 2, end)));
            out.append(close);
            i = end + 2;
        }
        return out.toString();
    }

    private static int nextTagOpen(String s, int from) {
        for (int k = s.indexOf('{', from); k >= 0 && k + 1 < s.length(); k = s.indexOf('{', k + 1)) {
            char c = s.charAt(k + 1);
            if (c == '{' || c == '%') {
                return k;
            }
            if (c == '#') { // a comment: skip it whole
                int e = s.indexOf("#}", k + 2);
                if (e < 0) return -1;
                k = e;
            }
        }
        return -1;
    }

    /** Index of {@code close} ending the tag body starting at {@code from}, skipping string literals. */
    private static int closeOf(String s, int from, String close) {
        for (int k = from; k < s.length(); k++) {
            char c = s.charAt(k);
            if (isQuote(c)) {
                k = stringEnd(s, k);
            } else if (s.startsWith(close, k)) {
                return k;
            }
        }
        return -1;
    }

    /** Whether {@code c} opens a Jinja string literal. */
    static boolean isQuote(char c) {
        return c == 0x22 || c == 0x27; // double or single quote, as numbers: no quote character stands in the source
    }

    static int stringEnd(String s, int quoteAt) {
        char q = s.charAt(quoteAt);
        for (int k = quoteAt + 1; k < s.length(); k++) {
            char c = s.charAt(k);
            if (c == '\\') k++;
            else if (c == q) return k;
        }
        return s.length() - 1;
    }

    /** One tag body with every {@code not} operand parenthesised. */
    static String expression(String e) {
        StringBuilder sb = new StringBuilder(e);
        // Right to left, so inserted parentheses do not move positions still to visit.
        for (int k = e.length() - 3; k >= 0; k--) {
            if (isWord(sb, k, "not") && !inString(sb, k) && !isOperatorNot(sb, k)) {
                int start = k + 3;
                int stop = operandEnd(sb, start);
                if (stop > start && !sb.substring(start, stop).isBlank()) {
                    sb.insert(stop, ')');
                    sb.insert(start, " (");
                }
            }
        }
        return sb.toString();
    }

    private static boolean isWord(CharSequence s, int k, String w) {
        if (k < 0 || k + w.length() > s.length() || !s.subSequence(k, k + w.length()).toString().equals(w)) {
            return false;
        }
        boolean before = k == 0 || !Character.isJavaIdentifierPart(s.charAt(k - 1)) && s.charAt(k - 1) != '.';
        boolean after = k + w.length() == s.length() || !Character.isJavaIdentifierPart(s.charAt(k + w.length()));
        return before && after;
    }

    /** {@code not in} and {@code is not} are operators, not the unary not. */
    private static boolean isOperatorNot(CharSequence s, int k) {
        int a = k + 3;
        while (a < s.length() && s.charAt(a) == ' ') a++;
        if (isWord(s, a, "in")) return true;
        int b = k - 1;
        while (b >= 0 && s.charAt(b) == ' ') b--;
        return b >= 1 && isWord(s, b - 1, "is");
    }

    private static boolean inString(CharSequence s, int k) {
        char q = 0;
        for (int i = 0; i < k; i++) {
            char c = s.charAt(i);
            if (q != 0) {
                if (c == '\\') i++;
                else if (c == q) q = 0;
            } else if (isQuote(c)) {
                q = c;
            }
        }
        return q != 0;
    }

    private static int operandEnd(CharSequence s, int from) {
        int depth = 0;
        for (int k = from; k < s.length(); k++) {
            char c = s.charAt(k);
            if (isQuote(c)) {
                k = stringEnd(s.toString(), k);
            } else if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                if (depth == 0) return k;
                depth--;
            } else if (depth == 0 && c == ',') {
                return k;
            } else if (depth == 0 && (isWord(s, k, "and") || isWord(s, k, "or") || isWord(s, k, "if")
                    || isWord(s, k, "else"))) {
                return trimEnd(s, k);
            }
        }
        return trimEnd(s, trailingDash(s));
    }

    /** The end of the expression before a trailing whitespace-control dash ("-}}", "-%}"). */
    private static int trailingDash(CharSequence s) {
        int k = s.length();
        while (k > 0 && s.charAt(k - 1) == ' ') k--;
        return k > 0 && s.charAt(k - 1) == '-' ? k - 1 : s.length();
    }

    private static int trimEnd(CharSequence s, int k) {
        while (k > 0 && Character.isWhitespace(s.charAt(k - 1))) k--;
        return k;
    }
}
