package io.kvtier.model;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.ForkJoinPool;

/**
 * Reads float32 rows the way the F32 matrix-vector kernel reads weights ({@link VectorKernels}'
 * vector width, four rows at a time), split over threads by the same hand-off as a forward pass
 * (the calling thread included), and only adds what it reads. It is the ceiling of any kernel
 * that must read the same bytes with the same threads: the read pass of a bandwidth bound
 * ({@code io.kvtier.bench.BandwidthBound}). Its {@link #compute} is the same split over
 * register-only FMA chains: the compute rate the threads reach when nothing waits for memory.
 *
 * <p>Its helpers park as soon as a read is done ({@link #SPIN_NANOS}, property
 * {@code kvtier.bound.spinNanos}, default 0) instead of spinning 50 us for a next range as a
 * forward pass's do: a read is one range, and what follows it is the decode step it is compared
 * with, whose own threads a spinning reader would take a CPU from (2 vCPUs: the step's caller,
 * its helper and the reader's helper).
 *
 * <p>Owns a pool of {@code threads - 1} helpers; not thread-safe (one thread reads at a time).
 */
public final class RowReader implements AutoCloseable {

    /** How long a helper spins for the next read before it parks, ns (0: parks at once). */
    static final long SPIN_NANOS = Long.getLong("kvtier.bound.spinNanos", 0L);
    /** Trips of the FMA loop in a unit of {@link #compute}: ~10 us, small enough to split evenly. */
    private static final int FMA_UNIT_TRIPS = 1 << 12;

    private final ForkJoinPool pool;
    private final Parallel parallel;
    private final float[] sums;

    /**
     * @param threads reading threads, the caller included (a forward pass's {@code --threads})
     * @throws IllegalArgumentException for fewer than 1
     */
    public RowReader(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        }
        this.pool = new ForkJoinPool(threads);
        this.parallel = new Parallel(pool, SPIN_NANOS, Parallel.MIN_PARALLEL_WORK);
        this.sums = new float[parallel.threads()];
    }

    /** Reading threads, the caller included. */
    public int threads() {
        return parallel.threads();
    }

    /**
     * Reads rows {@code 0..rows-1} of {@code rowFloats} floats each (row {@code r} at byte
     * {@code r * rowFloats * 4}) across the threads and returns their sum. Only whole groups of 4
     * rows and each row's whole vectors are read (at most 3 rows and 15 floats a row are not).
     *
     * @throws IndexOutOfBoundsException when the rows do not fit in {@code w}
     */
    public float read(MemorySegment w, int rowFloats, int rows) {
        check(w, rowFloats, rows);
        long rowBytes = (long) rowFloats * Float.BYTES;
        java.util.Arrays.fill(sums, 0f);
        parallel.forRange(rows, 4, Long.MAX_VALUE,
                (worker, from, to) -> sums[worker] += VectorKernels.sumRows(w, rowBytes, rowFloats, from, to));
        float sum = 0f;
        for (float s : sums) {
            sum += s;
        }
        return sum;
    }

    /** As {@link #read}, on the calling thread alone (e.g. to warm the loop up). */
    public static float readOnCaller(MemorySegment w, int rowFloats, int rows) {
        check(w, rowFloats, rows);
        return VectorKernels.sumRows(w, (long) rowFloats * Float.BYTES, rowFloats, 0, rows);
    }

    /**
     * Pure compute over the same threads and hand-off as {@link #read}: {@code units} units of
     * register-only vector FMA chains (no memory traffic), split as a read splits rows. The
     * compute counterpart of a read pass: how multiply-adds per second scale with the threads
     * when nothing waits for memory. Multiply-adds done: {@code units * multiplyAddsPerUnit()}.
     *
     * @return a sum of the chains' results (keep it observable so that the work cannot be dropped)
     * @throws IllegalArgumentException for a negative count
     */
    public float compute(int units) {
        checkUnits(units);
        java.util.Arrays.fill(sums, 0f);
        parallel.forRange(units, 1, Long.MAX_VALUE,
                (worker, from, to) -> sums[worker] += VectorKernels.fmaChains((long) (to - from) * FMA_UNIT_TRIPS));
        float sum = 0f;
        for (float s : sums) {
            sum += s;
        }
        return sum;
    }

    /** As {@link #compute}, on the calling thread alone. */
    public static float computeOnCaller(int units) {
        checkUnits(units);
        return VectorKernels.fmaChains((long) units * FMA_UNIT_TRIPS);
    }

    /** Multiply-adds (one per vector lane of each FMA) in a unit of {@link #compute}. */
    public static long multiplyAddsPerUnit() {
        return (long) FMA_UNIT_TRIPS * VectorKernels.FMA_CHAINS * VectorKernels.S.length();
    }

    private static void checkUnits(int units) {
        if (units < 0) {
            throw new IllegalArgumentException("compute units must be at least 0, got " + units);
        }
    }

    private static void check(MemorySegment w, int rowFloats, int rows) {
        if (rowFloats < 1 || rows < 0 || (long) rowFloats * Float.BYTES * rows > w.byteSize()) {
            throw new IndexOutOfBoundsException(rows + " rows of " + rowFloats + " floats do not fit in "
                    + w.byteSize() + " bytes");
        }
    }

    /** Stops the helpers. */
    @Override
    public void close() {
        pool.shutdownNow();
    }
}
