package io.kvtier.model.chat;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * Python's {@code str} methods that chat templates call ({@code content.startswith('<tool_response>')},
 * {@code content.split('</think>')[-1].lstrip('\n')}), as an EL resolver placed before Jinjava's
 * own: Jinjava otherwise looks for Java methods of {@link String}, which have other names
 * ({@code startsWith}) or other meanings ({@code split} takes a regex and drops trailing empty
 * strings). Supported: {@code startswith} / {@code endswith} (a string or a list of strings),
 * {@code strip} / {@code lstrip} / {@code rstrip} (whitespace or the given characters),
 * {@code split} (whitespace runs, or a separator, with an optional maxsplit), {@code upper},
 * {@code lower}. Any other call falls through to Jinjava.
 */
final class PyStringMethods extends ELResolver {

    private static final Object NONE = new Object();

    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
        if (!(base instanceof String s) || !(method instanceof String name)) {
            return null;
        }
        Object result = call(s, name, params == null ? new Object[0] : params);
        if (result == NONE) {
            return null;
        }
        context.setPropertyResolved(true);
        return result;
    }

    /** The result of {@code s.name(args)}, or {@link #NONE} when it is not one of the supported methods. */
    static Object call(String s, String name, Object[] args) {
        return switch (name) {
            case "startswith" -> args.length == 1 ? anyOf(args[0], s::startsWith) : NONE;
            case "endswith" -> args.length == 1 ? anyOf(args[0], s::endsWith) : NONE;
            case "strip" -> args.length <= 1 ? rstrip(lstrip(s, chars(args)), chars(args)) : NONE;
            case "lstrip" -> args.length <= 1 ? lstrip(s, chars(args)) : NONE;
            case "rstrip" -> args.length <= 1 ? rstrip(s, chars(args)) : NONE;
            case "split" -> args.length <= 2 ? split(s, args.length > 0 ? args[0] : null,
                    args.length > 1 ? ((Number) args[1]).intValue() : -1) : NONE;
            case "upper" -> args.length == 0 ? s.toUpperCase(Locale.ROOT) : NONE;
            case "lower" -> args.length == 0 ? s.toLowerCase(Locale.ROOT) : NONE;
            default -> NONE;
        };
    }

    private static boolean anyOf(Object arg, java.util.function.Predicate<String> test) {
        if (arg instanceof Collection<?> c) {
            for (Object o : c) {
                if (test.test(String.valueOf(o))) {
                    return true;
                }
            }
            return false;
        }
        return test.test(String.valueOf(arg));
    }

    /** The characters to strip; null means whitespace (Python's default, also for {@code None}). */
    private static String chars(Object[] args) {
        return args.length == 0 || args[0] == null ? null : String.valueOf(args[0]);
    }

    private static boolean strips(String chars, char c) {
        return chars == null ? Character.isWhitespace(c) : chars.indexOf(c) >= 0;
    }

    static String lstrip(String s, String chars) {
        int a = 0;
        while (a < s.length() && strips(chars, s.charAt(a))) {
            a++;
        }
        return s.substring(a);
    }

    static String rstrip(String s, String chars) {
        int b = s.length();
        while (b > 0 && strips(chars, s.charAt(b - 1))) {
            b--;
        }
        return s.substring(0, b);
    }

    /** Python's split: with a separator every piece is kept (also empty ones); without, runs of whitespace separate. */
    static List<String> split(String s, Object sepArg, int maxSplit) {
        List<String> out = new ArrayList<>();
        if (sepArg == null) {
            int i = 0;
            while (true) {
                while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
                if (i == s.length()) return out;
                if (maxSplit >= 0 && out.size() == maxSplit) {
                    out.add(rstrip(s.substring(i), null));
                    return out;
                }
                int j = i;
                while (j < s.length() && !Character.isWhitespace(s.charAt(j))) j++;
                out.add(s.substring(i, j));
                i = j;
            }
        }
        String sep = String.valueOf(sepArg);
        if (sep.isEmpty()) {
            throw new IllegalArgumentException("empty separator");
        }
        int from = 0;
        for (int at = s.indexOf(sep); at >= 0 && (maxSplit < 0 || out.size() < maxSplit); at = s.indexOf(sep, from)) {
            out.add(s.substring(from, at));
            from = at + sep.length();
        }
        out.add(s.substring(from));
        return out;
    }

    // Not a property resolver: every lookup below falls through to Jinjava's resolvers.

    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {
    }

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return false;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }
}
