package io.kvtier.replay;

import java.util.Arrays;

/**
 * Durations of a replay's requests (nanoseconds on the virtual clock), their percentiles exact:
 * the values are kept and sorted. An HdrHistogram of 3 significant digits rounded each value to
 * its bucket, so a lone request's p50 read 3.267 s beside its mean 3.266 s, and a 10M-token
 * run's end-to-end p50 2,511,284.6 s came out longer than its makespan of 2,510,294.4 s (a new
 * user's trial). A replay holds one value per request, so keeping them costs little.
 */
final class ExactPercentiles {

    private long[] values = new long[16];
    private int count;
    // A double: each value fits the clock, their sum need not (two end-to-end times of 5e18 and 6e18 ns
    // gave a mean of -3.7e9 s); exact while the sum is below 2^53 ns (104 days), as every real trace's is.
    private double sum;

    void record(long nanos) {
        if (count == values.length) {
            values = Arrays.copyOf(values, count * 2);
        }
        values[count++] = nanos;
        sum += nanos;
    }

    /** p50, p90, p99 (nearest rank: the least value that many percent are at or below), mean and max, in seconds. */
    ReplayResult.Percentiles seconds() {
        if (count == 0) {
            return new ReplayResult.Percentiles(0, 0, 0, 0, 0);
        }
        long[] sorted = Arrays.copyOf(values, count);
        Arrays.sort(sorted);
        return new ReplayResult.Percentiles(rank(sorted, 50) / 1e9, rank(sorted, 90) / 1e9, rank(sorted, 99) / 1e9,
                sum / count / 1e9, sorted[count - 1] / 1e9);
    }

    private static long rank(long[] sorted, int percent) {
        int r = (int) Math.ceil(percent / 100.0 * sorted.length); // 1-based
        return sorted[Math.max(1, Math.min(sorted.length, r)) - 1];
    }
}
