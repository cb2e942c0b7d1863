package io.kvtier.model;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.concurrent.ForkJoinPool;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The memory-bandwidth bound of decode: a token cannot be produced faster than the bytes it must
 * read (every weight matrix once, the K and V of its sequence's positions) stream from memory.
 *
 * <p>An instance owns a fresh native buffer (as large as the weights, so no cache holds it) and
 * a pool of the forward pass's thread count; {@link #pass()} reads the whole buffer once the way
 * the F32 kernels read weights ({@link VectorKernels}' vector width, four rows at a time, rows
 * split over the threads by the same {@link Parallel} as a forward pass) and returns its time.
 * On a shared machine a bandwidth measured seconds away from the figure it bounds is worth
 * little, so a benchmark interleaves passes with the steps it measures (A B A B) and compares
 * each step with the pass next to it ({@link #fraction}). Method: {@code docs/bandwidth-bound.md}.
 *
 * <p>Not thread-safe: one thread calls {@link #pass()}.
 */
public final class BandwidthBound implements AutoCloseable {

    private static final VectorSpecies<Float> S = VectorKernels.S;
    private static final int L = S.length();
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    /** Warm-up of the read loop: C2 needs ~10^4 loop trips, and a pass in interpreted vector code is ~100x slow. */
    private static final long WARMUP_NANOS = 300_000_000L;

    private final Arena arena = Arena.ofShared();
    private final ForkJoinPool pool;
    private final Parallel parallel;
    private final MemorySegment buffer;
    private final long rowBytes;
    private final int rowFloats;
    private final int rows;
    private final float[] sink;

    /**
     * Allocates and fills the buffer, starts the pool, and warms the read loop up (~0.3 s).
     *
     * @param bytes     buffer size, rounded up to whole rows; use the weight bytes per token ({@link #weightBytesPerToken})
     * @param rowFloats floats per row, e.g. the model's {@code dim} (the {@code in} of most matrices)
     * @param threads   reading threads, the caller included, as the forward pass's {@code --threads}
     * @throws IllegalArgumentException for a non-positive size, row length or thread count
     */
    public BandwidthBound(long bytes, int rowFloats, int threads) {
        if (bytes <= 0 || rowFloats <= 0 || threads <= 0) {
            throw new IllegalArgumentException("bandwidth over " + bytes + " bytes, rows of " + rowFloats
                    + " floats, " + threads + " threads");
        }
        this.rowFloats = rowFloats;
        this.rowBytes = (long) rowFloats * Float.BYTES;
        this.rows = Math.toIntExact((bytes + rowBytes - 1) / rowBytes);
        this.buffer = arena.allocate(rows * rowBytes, 64);
        buffer.fill((byte) 0x3f);   // every page touched before timing; floats of 0.75, never NaN
        this.pool = new ForkJoinPool(threads);
        this.parallel = new Parallel(pool);
        this.sink = new float[parallel.threads()];
        long warmEnd = System.nanoTime() + WARMUP_NANOS;
        int warmRows = Math.min(rows, Math.max(4, (int) ((256 << 10) / rowBytes)));
        while (System.nanoTime() < warmEnd) {
            sink[0] += readRows(buffer, rowBytes, rowFloats, 0, warmRows);
        }
    }

    /** Bytes one {@link #pass()} reads. */
    public long bufferBytes() {
        return rows * rowBytes;
    }

    /** Reads the whole buffer once across the threads; returns the time it took, in nanoseconds. */
    public long pass() {
        long t0 = System.nanoTime();
        parallel.forRange(rows, 4, Long.MAX_VALUE,
                (worker, from, to) -> sink[worker] += readRows(buffer, rowBytes, rowFloats, from, to));
        long t = System.nanoTime() - t0;
        if (Float.isNaN(sink[0])) {   // keeps the sums observable, so the reads cannot be dropped
            throw new AssertionError("NaN read from a buffer of 0.75s");
        }
        return t;
    }

    /** Best read bandwidth, bytes/s, over {@code passes} passes. */
    public double bestBytesPerSecond(int passes) {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < passes; i++) {
            best = Math.min(best, pass());
        }
        return bufferBytes() / (best / 1e9);
    }

    /**
     * A step's time against its bound: the time to read the step's bytes at the bandwidth of a
     * pass measured next to it, over the step's own time. 1 is the bound; above 1 means the bound
     * was measured wrong (a busier machine during the pass, or bytes counted that were not read).
     *
     * @param stepNanos    the step's time
     * @param stepBytes    bytes the step must read (weights, plus KV of every token in it)
     * @param passNanos    a {@link #pass()} time measured next to the step
     */
    public double fraction(long stepNanos, double stepBytes, long passNanos) {
        return passNanos * (stepBytes / bufferBytes()) / stepNanos;
    }

    /** Sum of rows {@code from..to-1}: four rows at a time and vector loads, as {@link VectorKernels#matvec}. */
    private static float readRows(MemorySegment w, long rowBytes, int in, int from, int to) {
        FloatVector s0 = FloatVector.zero(S), s1 = s0, s2 = s0, s3 = s0;
        for (int r = from; r + 4 <= to; r += 4) {
            long o0 = r * rowBytes, o1 = o0 + rowBytes, o2 = o1 + rowBytes, o3 = o2 + rowBytes;
            for (int k = 0; k + L <= in; k += L) {
                long kb = (long) k * Float.BYTES;
                s0 = FloatVector.fromMemorySegment(S, w, o0 + kb, LE).add(s0);
                s1 = FloatVector.fromMemorySegment(S, w, o1 + kb, LE).add(s1);
                s2 = FloatVector.fromMemorySegment(S, w, o2 + kb, LE).add(s2);
                s3 = FloatVector.fromMemorySegment(S, w, o3 + kb, LE).add(s3);
            }
        }
        // The last part's rows past a whole group of 4 and each row's floats past its last whole
        // vector are counted but not read: at most 3 rows and L-1 floats a row (under 1% for any model).
        return s0.add(s1).add(s2.add(s3)).reduceLanes(VectorOperators.ADD);
    }

    /**
     * Bytes of every matrix a decoded token reads: all layers' projections and the classifier, in
     * their file encoding (the token embedding only as the classifier: a lookup reads one row).
     */
    public static long weightBytesPerToken(Model m) {
        long bytes = m.classifier().data().byteSize();
        for (Model.Matrix x : Model.Matrix.values()) {
            for (int l = 0; l < m.config().layers(); l++) {
                bytes += m.matrix(x, l).data().byteSize();
            }
        }
        return bytes;
    }

    /**
     * KV bytes attention reads for one token that attends over {@code positions} positions: K and V
     * of every layer, {@code kvDim} float32s each per position.
     */
    public static double kvBytesPerToken(ModelConfig c, double positions) {
        return 2.0 * c.layers() * c.kvDim() * Float.BYTES * positions;
    }

    /** Stops the pool and frees the buffer. */
    @Override
    public void close() {
        pool.shutdownNow();
        arena.close();
    }
}
