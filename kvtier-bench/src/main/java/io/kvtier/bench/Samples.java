package io.kvtier.bench;

import java.util.Arrays;
import java.util.List;

/**
 * Order statistics of a bench's samples (times, rates, ratios), one definition for every bench:
 * a figure of no samples is refused here rather than read past an empty array.
 */
public final class Samples {

    private Samples() {
    }

    /**
     * The median of {@code xs}: the middle value, or the mean of the middle two for an even count.
     * {@code xs} is not changed.
     *
     * @throws IllegalStateException if {@code xs} is empty (a bench that timed nothing: its caller's
     *                               flags should have been refused before it ran)
     */
    public static double median(double[] xs) {
        return quantile(sorted(xs), 0.5);
    }

    /** {@link #median(double[])} of a list. */
    public static double median(List<Double> xs) {
        return median(xs.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /**
     * The {@code q}-quantile (0 to 1) of ascending {@code sorted}, interpolated between the two
     * nearest ranks (rank {@code q * (n - 1)}): 0.5 is the {@link #median}, 0.25 and 0.75 the quartiles.
     *
     * @throws IllegalStateException    if {@code sorted} is empty
     * @throws IllegalArgumentException if {@code q} is outside 0 to 1
     */
    public static double quantile(double[] sorted, double q) {
        if (!(q >= 0 && q <= 1)) {
            throw new IllegalArgumentException("quantile " + q + " is outside 0 to 1");
        }
        if (sorted.length == 0) {
            throw new IllegalStateException("no samples to take a quantile of (the bench timed nothing)");
        }
        double rank = q * (sorted.length - 1);
        int lo = (int) Math.floor(rank);
        int hi = (int) Math.ceil(rank);
        return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
    }

    /** A sorted copy of {@code xs}. */
    public static double[] sorted(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s;
    }
}
