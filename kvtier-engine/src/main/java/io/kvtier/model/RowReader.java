package io.kvtier.model;

import io.kvtier.model.tensor.Lanes;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ForkJoinPool;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Reads float32 rows the fastest way found to stream memory in Java ({@link VectorKernels}' vector
 * width, each thread's part as four far-apart linear streams: {@link VectorKernels#sumStreams}),
 * split over threads by the same hand-off as a forward pass (the calling thread included), and
 * only adds what it reads. It is the ceiling of any kernel that must read the same bytes with the
 * same threads: the read pass of a bandwidth bound
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
     * {@code r * rowFloats * 4}) across the threads and returns their sum. Every float is read;
     * each thread's parts are whole groups of 4 rows (as a forward pass's), each read as four
     * linear streams ({@link VectorKernels#sumStreams}).
     *
     * @throws IndexOutOfBoundsException when the rows do not fit in {@code w}
     */
    public float read(MemorySegment w, int rowFloats, int rows) {
        check(w, rowFloats, rows);
        long rowBytes = (long) rowFloats * Float.BYTES;
        java.util.Arrays.fill(sums, 0f);
        parallel.forRange(rows, 4, Long.MAX_VALUE,
                (worker, from, to) -> sums[worker] += VectorKernels.sumStreams(w, from * rowBytes, to * rowBytes));
        float sum = 0f;
        for (float s : sums) {
            sum += s;
        }
        return sum;
    }

    /**
     * Copies rows {@code 0..rows-1} of {@code rowFloats} floats each from {@code src} to the same
     * offsets of {@code dst} across the threads, split as {@link #read} splits them, each part by
     * {@link MemorySegment#copy} (the JDK's memcpy): a copy bandwidth at the forward pass's thread count.
     *
     * @throws IndexOutOfBoundsException when the rows do not fit in either segment
     */
    public void copy(MemorySegment src, MemorySegment dst, int rowFloats, int rows) {
        check(src, rowFloats, rows);
        check(dst, rowFloats, rows);
        long rowBytes = (long) rowFloats * Float.BYTES;
        parallel.forRange(rows, 4, Long.MAX_VALUE, (worker, from, to) ->
                MemorySegment.copy(src, from * rowBytes, dst, from * rowBytes, (to - from) * rowBytes));
    }

    /** As {@link #read}, on the calling thread alone (e.g. to warm the loop up). */
    public static float readOnCaller(MemorySegment w, int rowFloats, int rows) {
        check(w, rowFloats, rows);
        return VectorKernels.sumStreams(w, 0, (long) rowFloats * Float.BYTES * rows);
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
                (worker, from, to) -> sums[worker] += fmaChains((long) (to - from) * FMA_UNIT_TRIPS));
        float sum = 0f;
        for (float s : sums) {
            sum += s;
        }
        return sum;
    }

    /** As {@link #compute}, on the calling thread alone. */
    public static float computeOnCaller(int units) {
        checkUnits(units);
        return fmaChains((long) units * FMA_UNIT_TRIPS);
    }

    /** Multiply-adds (one per vector lane of each FMA) in a unit of {@link #compute}. */
    public static long multiplyAddsPerUnit() {
        return (long) FMA_UNIT_TRIPS * FMA_CHAINS * S.length();
    }

    /** The kernels' species: the compute pass runs at their vector width. */
    private static final VectorSpecies<Float> S = VectorKernels.S;
    /** Independent FMA chains of {@link #fmaChains}: more than FMA latency x FMA units (4 x 2 on the CPUs measured). */
    private static final int FMA_CHAINS = 12;

    /**
     * Pure compute, the counterpart of {@link VectorKernels#sumStreams}: {@code trips} trips of
     * {@link #FMA_CHAINS} independent vector FMAs ({@code a = x * a + y}, the chain an argument,
     * never the receiver: rule (4) of {@link VectorKernels}) on registers, no memory access;
     * returns a sum of the results so that none can be dropped. Multiply-adds done:
     * {@code trips * FMA_CHAINS * S.length()}.
     */
    private static float fmaChains(long trips) {
        FloatVector x = FloatVector.broadcast(S, 0.9999f), y = FloatVector.broadcast(S, 1e-5f);
        // Distinct starts, so that no two chains are the same expression the JIT could merge.
        FloatVector a0 = FloatVector.broadcast(S, 0.50f), a1 = FloatVector.broadcast(S, 0.51f);
        FloatVector a2 = FloatVector.broadcast(S, 0.52f), a3 = FloatVector.broadcast(S, 0.53f);
        FloatVector a4 = FloatVector.broadcast(S, 0.54f), a5 = FloatVector.broadcast(S, 0.55f);
        FloatVector a6 = FloatVector.broadcast(S, 0.56f), a7 = FloatVector.broadcast(S, 0.57f);
        FloatVector a8 = FloatVector.broadcast(S, 0.58f), a9 = FloatVector.broadcast(S, 0.59f);
        FloatVector a10 = FloatVector.broadcast(S, 0.60f), a11 = FloatVector.broadcast(S, 0.61f);
        for (long t = 0; t < trips; t++) {
            a0 = x.fma(a0, y);
            a1 = x.fma(a1, y);
            a2 = x.fma(a2, y);
            a3 = x.fma(a3, y);
            a4 = x.fma(a4, y);
            a5 = x.fma(a5, y);
            a6 = x.fma(a6, y);
            a7 = x.fma(a7, y);
            a8 = x.fma(a8, y);
            a9 = x.fma(a9, y);
            a10 = x.fma(a10, y);
            a11 = x.fma(a11, y);
        }
        FloatVector s = a0.add(a1).add(a2.add(a3)).add(a4.add(a5).add(a6.add(a7))).add(a8.add(a9).add(a10.add(a11)));
        return Lanes.sum(s);
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
