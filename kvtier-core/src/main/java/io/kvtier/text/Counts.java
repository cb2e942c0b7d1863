package io.kvtier.text;

import java.util.Locale;
import java.util.Map;

/** Counts by name for the summary lines users read: {@code host 1,024, disk 3}, or {@code none}. */
public final class Counts {

    private Counts() {
    }

    /**
     * The entries of {@code byName} with a count other than 0, in its order, each as its name and
     * the count with thousands separators; {@code none} if there is no such entry. Records keep
     * every key with 0 (fixed CSV columns); a line shows only what happened, so {@code {host=0}} and
     * {@code {}} both read {@code none}.
     */
    public static String nonZero(Map<String, ? extends Number> byName) {
        StringBuilder sb = new StringBuilder();
        byName.forEach((k, v) -> {
            if (v.longValue() != 0) {
                sb.append(sb.isEmpty() ? "" : ", ").append(k).append(String.format(Locale.ROOT, " %,d", v.longValue()));
            }
        });
        return sb.isEmpty() ? "none" : sb.toString();
    }
}
