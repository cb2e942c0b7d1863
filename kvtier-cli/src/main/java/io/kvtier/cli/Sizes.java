package io.kvtier.cli;

import java.util.Locale;

/**
 * Parses sizes in bytes such as {@code 256M}, {@code 1.5G}, {@code 1GiB}, {@code 4096}: {@code K/M/G/T}
 * and {@code Ki/Mi/Gi/Ti} are both powers of 1024 (the vocabulary's rule for bytes,
 * {@link FlagVocabulary}), an optional {@code B} after them; case does not matter. A plain number
 * is digits ({@code 1.5} is refused, not read as 1, and so is {@code 1.0}); with a unit the bytes
 * are rounded down.
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

    static long parseBytes(String text, String flag) {
        String s = text.trim().toUpperCase(Locale.ROOT);
        if (s.endsWith("B")) {
            s = s.substring(0, s.length() - 1);
        }
        boolean binary = s.endsWith("I"); // Ki, Mi, Gi, Ti: the same powers of 1024 as K, M, G, T
        if (binary) {
            s = s.substring(0, s.length() - 1);
        }
        long mult = 1;
        if (!s.isEmpty()) {
            switch (s.charAt(s.length() - 1)) {
                case 'K' -> mult = 1L << 10;
                case 'M' -> mult = 1L << 20;
                case 'G' -> mult = 1L << 30;
                case 'T' -> mult = 1L << 40;
                default -> {
                    if (binary) {
                        throw new BadInputException(flag + ": '" + text + "' is not a size (e.g. 4096, 256M, 1.5G, 1GiB)");
                    }
                }
            }
            if (mult != 1) {
                s = s.substring(0, s.length() - 1);
            }
        }
        try {
            double v = Double.parseDouble(s);
            if (v < 0 || Double.isNaN(v) || Double.isInfinite(v)) {
                throw new NumberFormatException();
            }
            // A count of bytes is digits, as a count of tokens is: 1.5 is not 1, and 1.0 is refused alike.
            if (mult == 1 && (s.contains(".") || v != Math.rint(v))) {
                throw new BadInputException(flag + ": '" + text + "' is not a whole number of bytes (e.g. 4096, 256M, 1.5G)");
            }
            double bytes = v * mult;
            if (bytes > (double) (1L << 50)) {
                throw new BadInputException(flag + ": '" + text + "' is too large (at most 1P)");
            }
            return (long) bytes;
        } catch (BadInputException e) {
            throw e;
        } catch (NumberFormatException e) {
            throw new BadInputException(flag + ": '" + text + "' is not a size (e.g. 4096, 256M, 1.5G, 1GiB)");
        }
    }
}
