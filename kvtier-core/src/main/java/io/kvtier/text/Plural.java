package io.kvtier.text;

/** English counts for messages users read: "1 request", "2 requests", "0 requests". */
public final class Plural {
    private Plural() {
    }

    /**
     * @param n the count (any sign)
     * @param singular the noun in the singular; the plural adds "s" (every noun kvtier counts does)
     * @return {@code n} and the noun, e.g. {@code count(1, "request")} = "1 request"
     */
    public static String count(long n, String singular) {
        return count(n, singular, singular + "s");
    }

    /** {@link #count(long, String)} with thousands separators: {@code grouped(12031, "request")} = "12,031 requests". */
    public static String grouped(long n, String singular) {
        return String.format(java.util.Locale.ROOT, "%,d %s", n, n == 1 ? singular : singular + "s");
    }

    /** {@link #count(long, String)} for a noun whose plural is not its singular and "s": {@code count(2, "pass", "passes")}. */
    public static String count(long n, String singular, String plural) {
        return n + " " + (n == 1 ? singular : plural);
    }
}
