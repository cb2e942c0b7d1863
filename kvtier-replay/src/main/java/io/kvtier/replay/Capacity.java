package io.kvtier.replay;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
        String lower = text.toLowerCase(Locale.ROOT);
        if (lower.equals("inf") || lower.equals("infinity") || lower.equals("unbounded")) {
            return INF;
        }
        if (lower.equals("min")) {
            return MIN;
        }
        String examples = EXAMPLES + (allowed.contains(Kind.INF) ? ", inf" : "") + (allowed.contains(Kind.MIN) ? ", min" : "");
        try {
            long n = count(text, Long.MAX_VALUE, examples);
            if (n < 0) {
                throw new NumberFormatException(noCount(text, examples));
            }
            return tokens(n);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + ": " + e.getMessage());
        }
    }

    /** The examples of every refusal of a token count. */
    private static final String EXAMPLES = "4096, 4k, 4Ki, 1M";

    /**
     * Digits (grouped in threes by underscores if wanted: {@code 1_000}), a fraction only before a
     * suffix ({@link #count} refuses a plain {@code 1.0} as it does {@code 1.5}), and an optional
     * suffix spelled exactly: {@code k} (a lowercase k, as in SI), {@code M}, {@code G},
     * {@code Ki}, {@code Mi}, {@code Gi}. {@code 1m} and {@code 4K} are refused rather than guessed
     * ({@code m} is milli; {@code K} is 1024 in sizes in bytes).
     */
    private static final Pattern COUNT = Pattern.compile("(-?(?:\\d{1,3}(?:_\\d{3})+|\\d+)(?:\\.\\d+)?)(k|M|G|Ki|Mi|Gi)?");

    /**
     * A count of tokens, the rule of every flag that counts tokens: a number with an optional suffix,
     * {@code k}, {@code M}, {@code G} powers of 1000 ({@code 3M} = 3,000,000 tokens), {@code Ki},
     * {@code Mi}, {@code Gi} powers of 1024 ({@code 1Mi} = 1,048,576), spelled as {@link #COUNT} says.
     * A number without a suffix is digits: a decimal point there is no count ({@code 1.5} and
     * {@code 1.0} alike; {@code 1.0} was read as 1 while {@code 1.5} was refused). With a suffix the
     * value is exact (decimal, not floating point) and must be a whole number of tokens ({@code 1.5k}
     * is 1,500, {@code 0.000249M} is 249, {@code 0.0129k} is refused). A sign is kept, for the
     * flag's own range check to refuse in its words.
     *
     * @param max the largest count the flag takes
     * @throws NumberFormatException whose message says what is wrong with {@code text}, without the flag
     */
    public static long count(String text, long max) {
        return count(text, max, EXAMPLES);
    }

    /** {@link #count(String, long)} up to {@link Long#MAX_VALUE}. */
    public static long count(String text) {
        return count(text, Long.MAX_VALUE);
    }

    private static long count(String text, long max, String examples) {
        Matcher m = COUNT.matcher(text);
        if (!m.matches() || (m.group(2) == null && m.group(1).contains("."))) {
            throw new NumberFormatException(noCount(text, examples));
        }
        long mult = m.group(2) == null ? 1 : switch (m.group(2)) {
            case "k" -> 1000L;
            case "M" -> 1_000_000L;
            case "G" -> 1_000_000_000L;
            case "Ki" -> 1024L;
            case "Mi" -> 1024L * 1024;
            default -> 1024L * 1024 * 1024;
        };
        BigDecimal v = new BigDecimal(m.group(1).replace("_", "")).multiply(BigDecimal.valueOf(mult));
        if (v.signum() != 0 && v.stripTrailingZeros().scale() > 0) {
            throw new NumberFormatException("'" + text + "' is " + v.stripTrailingZeros().toPlainString()
                    + " tokens, not a whole number");
        }
        BigInteger n = v.toBigInteger();
        if (n.abs().compareTo(BigInteger.valueOf(max)) > 0) {
            throw new NumberFormatException(n.signum() > 0 ? "'" + text + "' is too large: at most "
                    + String.format(Locale.ROOT, "%,d", max) + " tokens" : noCount(text, examples));
        }
        return n.longValueExact();
    }

    private static String noCount(String text, String examples) {
        return "'" + text + "' is not a count of tokens (e.g. " + examples + ")";
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
