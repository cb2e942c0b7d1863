package io.kvtier.cli;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses sizes in bytes such as {@code 256M}, {@code 1.5G}, {@code 1GiB}, {@code 4096}: {@code K/M/G/T}
 * and {@code Ki/Mi/Gi/Ti} are both powers of 1024 (the vocabulary's rule for bytes,
 * {@link FlagVocabulary}), an optional {@code B} after them; case does not matter. A plain number
 * is digits ({@code 1.5} is refused, not read as 1, and so is {@code 1.0}); with a unit the bytes
 * are rounded down. Nothing else is a size ({@code 1e3}, {@code .5G}, {@code +1M}: {@link #SIZE}).
 */
final class Sizes {

    private Sizes() {
    }

    /** {@code bytes} for a reader: {@code 512 bytes}, {@code 40.0 KiB}, {@code 1.5 GiB} (powers of 1024). */
    static String describe(long bytes) {
        if (bytes < 1024) {
            return bytes + " bytes";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = bytes / 1024.0;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /**
     * Digits, a fraction, a unit and a {@code B}, in any case ({@code 256m}, {@code 1.5GiB}, {@code 4096B}).
     * Spelled exactly: {@code Double.parseDouble} took {@code 1e3}, {@code 0x1p10}, {@code 1d}, {@code +1M}
     * and {@code 1 M} too.
     */
    private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)(?:([KMGT])(I)?)?(B)?", Pattern.CASE_INSENSITIVE);

    /** The largest size a flag takes: 1 PiB (1024T: P is no unit). */
    private static final long MAX = 1L << 50;

    static long parseBytes(String text, String flag) {
        Matcher m = SIZE.matcher(text.trim());
        if (!m.matches()) {
            throw new BadInputException(flag + ": '" + text + "' is not a size (e.g. 4096, 256M, 1.5G, 1GiB)");
        }
        // A count of bytes is digits, as a count of tokens is: 1.5 is not 1, and 1.0 is refused alike.
        if (m.group(2) == null && m.group(1).contains(".")) {
            throw new BadInputException(flag + ": '" + text + "' is not a whole number of bytes (e.g. 4096, 256M, 1.5G)");
        }
        int shift = m.group(2) == null ? 0 : 10 * ("KMGT".indexOf(Character.toUpperCase(m.group(2).charAt(0))) + 1);
        BigDecimal bytes = new BigDecimal(m.group(1)).multiply(new BigDecimal(BigInteger.ONE.shiftLeft(shift)));
        if (bytes.compareTo(BigDecimal.valueOf(MAX)) > 0) {
            throw new BadInputException(flag + ": '" + text + "' is too large (at most 1024T, 1 PiB)");
        }
        return bytes.setScale(0, RoundingMode.DOWN).longValueExact();
    }
}
