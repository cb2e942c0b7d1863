package io.kvtier.replay;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * Capacity of one tier in tokens, as given on the command line: a number of tokens, {@code inf}
 * (room for every block of the trace: nothing is ever evicted) or {@code min} (device tier only:
 * the smallest pool that fits the trace's largest request, so that the device caches as little
 * as the engine allows).
 *
 * @param kind   which of the three
 * @param tokens the number of tokens for {@link Kind#TOKENS}, else 0
 */
public record Capacity(Kind kind, long tokens) {

    /** How a capacity is given. */
    public enum Kind { TOKENS, INF, MIN }

    public static final Capacity INF = new Capacity(Kind.INF, 0);
    public static final Capacity MIN = new Capacity(Kind.MIN, 0);

    public Capacity {
        if (kind == Kind.TOKENS && tokens < 0) {
            throw new IllegalArgumentException("capacity must be >= 0 tokens, got " + tokens);
        }
    }

    /** Whether this is 0 tokens: "no such tier" for the host, disk and remote tiers. */
    public boolean isNone() {
        return kind == Kind.TOKENS && tokens == 0;
    }

    /**
     * The error for {@link #MIN} given to a tier behind the device tier.
     *
     * @param flag the option it was given to, e.g. {@code --host-cache-tokens}
     */
    public static IllegalArgumentException deviceOnly(String flag) {
        return new IllegalArgumentException(flag + ": 'min' is for the device tier only");
    }

    /** A capacity of {@code tokens} tokens. */
    public static Capacity tokens(long tokens) {
        return new Capacity(Kind.TOKENS, tokens);
    }

    /**
     * Parses {@code inf}, {@code min}, or a token count as {@link #count} reads it.
     *
     * @param flag names the option in the error message
     * @throws IllegalArgumentException saying what is wrong with {@code text}
     */
    public static Capacity parse(String text, String flag) {
        return parse(text, flag, flag.contains("device") ? EnumSet.allOf(Kind.class) : EnumSet.of(Kind.TOKENS, Kind.INF));
    }

    /**
     * {@link #parse(String, String)} for a flag that takes only the kinds {@code allowed}: its error
     * for text that is no capacity lists only their spellings. A capacity of another kind is still
     * returned, for the caller to refuse in words that say why ({@code inf} in a sweep).
     */
    public static Capacity parse(String text, String flag, Set<Kind> allowed) {
        String lower = text.trim().replace("_", "").replace(",", "").toLowerCase(Locale.ROOT);
        if (lower.equals("inf") || lower.equals("infinity") || lower.equals("unbounded")) {
            return INF;
        }
        if (lower.equals("min")) {
            return MIN;
        }
        try {
            long n = count(text);
            if (n < 0) {
                throw new NumberFormatException();
            }
            return tokens(n);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + ": '" + text
                    + "' is not a capacity in tokens (e.g. 1M, 3000000, 448k, 1Mi" + (allowed.contains(Kind.INF) ? ", inf" : "")
                    + (allowed.contains(Kind.MIN) ? ", min" : "") + ")");
        }
    }

    /**
     * A count of tokens, the rule of every flag that counts tokens: a number with an optional suffix,
     * {@code k}, {@code M}, {@code G} powers of 1000 ({@code 3M} = 3,000,000 tokens), {@code Ki},
     * {@code Mi}, {@code Gi} powers of 1024 ({@code 1Mi} = 1,048,576). Underscores and commas are
     * ignored; a number without a suffix is whole ({@code 1.5} is refused, {@code 1.5k} is 1,500).
     * A sign is kept, for the flag's own range check to refuse in its words.
     *
     * @throws NumberFormatException for text that is no count of tokens
     */
    public static long count(String text) {
        String s = text.trim().replace("_", "").replace(",", "");
        String lower = s.toLowerCase(Locale.ROOT);
        long mult = 1;
        String[][] suffixes = {{"ki", "1024"}, {"mi", "1048576"}, {"gi", "1073741824"},
                {"k", "1000"}, {"m", "1000000"}, {"g", "1000000000"}};
        for (String[] suf : suffixes) {
            if (lower.endsWith(suf[0])) {
                mult = Long.parseLong(suf[1]);
                s = s.substring(0, s.length() - suf[0].length());
                break;
            }
        }
        double v = Double.parseDouble(s);
        if (Double.isNaN(v) || Math.abs(v * mult) > Long.MAX_VALUE / 2 || (mult == 1 && v != Math.rint(v))) {
            throw new NumberFormatException("'" + text + "' is not a count of tokens");
        }
        return (long) (v * mult);
    }

    /** Whole blocks of {@code blockSize} tokens in this capacity (only for {@link Kind#TOKENS}). */
    public long blocks(int blockSize) {
        if (kind != Kind.TOKENS) {
            throw new IllegalStateException(this + " is not a number of tokens");
        }
        return tokens / blockSize;
    }

    /** {@code inf}, {@code min} or the token count with a decimal suffix where exact. */
    @Override
    public String toString() {
        return switch (kind) {
            case INF -> "inf";
            case MIN -> "min";
            case TOKENS -> format(tokens);
        };
    }

    /** A token count with a decimal suffix where exact ({@code 3M}, {@code 448k}), else plain digits. */
    public static String format(long tokens) {
        if (tokens >= 1_000_000_000 && tokens % 1_000_000_000 == 0) {
            return tokens / 1_000_000_000 + "G";
        }
        if (tokens >= 1_000_000 && tokens % 100_000 == 0) {
            return tokens % 1_000_000 == 0 ? tokens / 1_000_000 + "M" : (tokens / 100_000) / 10.0 + "M";
        }
        if (tokens >= 1_000 && tokens % 1_000 == 0) {
            return tokens / 1_000 + "k";
        }
        return Long.toString(tokens);
    }
}
