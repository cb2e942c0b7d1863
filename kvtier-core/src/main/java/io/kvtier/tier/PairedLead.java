package io.kvtier.tier;

/**
 * One policy's decayed lead over another from paired samples, and whether it is significant
 * ({@link DuelingPolicy}'s rule). Each sample {@code d} is the difference of the two policies' hits
 * on the same access; every sum decays by {@code keep} per sample, so the newest samples weigh most.
 * The lead is {@code sum w_i d_i}; its standard error is {@code sqrt(sum w_i^2 x var(d))}, the
 * variance from the decayed moments with the small-sample correction {@code n / (n - 1)}, {@code n =
 * (sum w_i)^2 / sum w_i^2} the effective number of samples.
 */
final class PairedLead {

    private final double keep;
    private double lead;
    private double weights;
    private double squaredWeights;
    private double squaredLeads;

    /** @param keep weight kept by the past at each sample, in (0, 1] */
    PairedLead(double keep) {
        if (!(keep > 0 && keep <= 1)) {
            throw new IllegalArgumentException("keep must be in (0, 1], got " + keep);
        }
        this.keep = keep;
    }

    /** Adds one paired difference {@code d} (hits of the challenger minus hits of the incumbent). */
    void add(double d) {
        lead = lead * keep + d;
        weights = weights * keep + 1;
        squaredWeights = squaredWeights * keep * keep + 1;
        squaredLeads = squaredLeads * keep + d * d;
    }

    /** The decayed sum of the samples. */
    double lead() {
        return lead;
    }

    /** Standard error of {@link #lead()}; infinite below two effective samples. */
    double standardError() {
        double n = weights * weights / squaredWeights;
        if (!(n > 1)) {
            return Double.POSITIVE_INFINITY;
        }
        double mean = lead / weights;
        double variance = Math.max(0, squaredLeads / weights - mean * mean) * n / (n - 1);
        return Math.sqrt(squaredWeights * variance);
    }

    /** Whether the lead exceeds {@code z} standard errors. */
    boolean exceeds(double z) {
        return lead > z * standardError();
    }

    /** Forgets every sample. */
    void clear() {
        lead = 0;
        weights = 0;
        squaredWeights = 0;
        squaredLeads = 0;
    }
}
