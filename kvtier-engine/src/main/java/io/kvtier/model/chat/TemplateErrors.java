package io.kvtier.model.chat;

import com.hubspot.jinjava.interpret.TemplateError;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns Jinjava's render errors into what a user can act on: the template line and the construct
 * kvtier's renderer does not support, never Jinjava's class names or parser states.
 */
final class TemplateErrors {

    private static final Pattern METHOD = Pattern.compile("Cannot find method '?(\\w+)'?");
    private static final int QUOTE_MAX = 100;

    private TemplateErrors() {
    }

    /**
     * One line describing {@code e} when it means the template did not render as written (every
     * fatal error, and unknown filters, functions and tags, which Jinjava would otherwise skip
     * silently and so render a different prompt), or null for a harmless warning.
     */
    static String unsupported(TemplateError e, String source) {
        boolean unknownName = e.getReason() == TemplateError.ErrorReason.UNKNOWN
                && (e.getItem() == TemplateError.ErrorItem.FILTER || e.getItem() == TemplateError.ErrorItem.FUNCTION
                || e.getItem() == TemplateError.ErrorItem.TAG || e.getItem() == TemplateError.ErrorItem.EXPRESSION_TEST);
        if (e.getSeverity() != TemplateError.ErrorType.FATAL && !unknownName) {
            return null;
        }
        String message = e.getMessage() == null ? "" : e.getMessage();
        String what;
        Matcher m = METHOD.matcher(message);
        if (m.find()) {
            what = "the method ." + m.group(1) + "()";
        } else if (message.contains("Unknown tag")) {
            what = "the tag '" + e.getFieldName() + "'";
        } else if (unknownName || e.getReason() == TemplateError.ErrorReason.UNKNOWN) {
            String kind = switch (e.getItem()) {
                case FILTER -> "the filter ";
                case FUNCTION -> "the function ";
                case TAG -> "the tag ";
                case EXPRESSION_TEST -> "the test ";
                default -> "the name ";
            };
            what = kind + (e.getFieldName() == null || e.getFieldName().isEmpty() ? "used there" : "'" + e.getFieldName() + "'");
        } else if (e.getReason() == TemplateError.ErrorReason.SYNTAX_ERROR) {
            what = "syntax kvtier's Jinja renderer cannot parse";
        } else {
            what = "an expression kvtier's Jinja renderer cannot evaluate";
        }
        return "line " + e.getLineno() + " uses " + what + ", which is not supported: " + quote(source, e.getLineno());
    }

    /**
     * One line naming the first filter of {@code source} that {@code known} does not define, or
     * null when all are defined (Jinjava skips an unknown filter without an error, which would
     * render a different prompt than the template's author meant).
     */
    static String unknownFilter(String source, java.util.function.Predicate<String> known) {
        String[] found = new String[1];
        NotPrecedence.mapTags(source, body -> {
            for (int k = 0; k < body.length() && found[0] == null; k++) {
                char c = body.charAt(k);
                if (NotPrecedence.isQuote(c)) {
                    k = NotPrecedence.stringEnd(body, k);
                } else if (c == '|') {
                    int a = k + 1;
                    while (a < body.length() && body.charAt(a) == ' ') a++;
                    int b = a;
                    while (b < body.length() && Character.isJavaIdentifierPart(body.charAt(b))) b++;
                    if (b > a && !known.test(body.substring(a, b))) {
                        found[0] = body.substring(a, b);
                    }
                }
            }
            return body;
        });
        if (found[0] == null) {
            return null;
        }
        Matcher at = Pattern.compile("\\|\\s*" + Pattern.quote(found[0]) + "\\b").matcher(source);
        int line = at.find() ? (int) source.substring(0, at.start()).chars().filter(ch -> ch == '\n').count() + 1 : 0;
        return "line " + line + " uses the filter '" + found[0] + "', which is not supported: " + quote(source, line);
    }

    /** Line {@code lineno} (1-based) of the template, trimmed and cut to {@value #QUOTE_MAX} characters. */
    static String quote(String source, int lineno) {
        String[] lines = source.split("\n", -1);
        if (lineno < 1 || lineno > lines.length) {
            return "(line not in the template)";
        }
        String l = lines[lineno - 1].strip();
        return l.length() > QUOTE_MAX ? l.substring(0, QUOTE_MAX) + "..." : l;
    }
}
