package io.kvtier.bench;

import io.kvtier.memory.ReservedMemory;
import io.kvtier.model.Model;
import io.kvtier.model.ModelConfig;
import io.kvtier.model.RowReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The memory-bandwidth bound of decode: a token cannot be produced faster than the bytes it must
 * read (every weight matrix once, the K and V of its sequence's positions) stream from memory.
 *
 * <p>An instance owns a fresh native buffer (as large as the weights, so no cache holds it) and
 * a {@link RowReader} of the forward pass's thread count; {@link #pass()} reads the whole buffer
 * once the fastest way found to stream memory in Java (the kernels' vector width, each thread's
 * part as four far-apart linear streams, rows split over the threads by the same hand-off as a
 * forward pass) and returns its time.
 * On a shared machine a bandwidth measured seconds away from the figure it bounds is worth
 * little, so a benchmark interleaves passes with the steps it measures (A B A B) and compares
 * each step with the pass next to it ({@link #fraction}). Method: {@code docs/bandwidth-bound.md}.
 *
 * <p>Not thread-safe: one thread calls {@link #pass()}.
 */
public final class BandwidthBound implements AutoCloseable {

    /**
     * Warm-up of the read loop: C2 needs ~10^4 loop trips, and a pass in interpreted vector code is
     * ~100x slow. Not enough on a busy machine, where C2 may not have compiled {@link #pass()} by
     * the end of it: a caller warms its passes up with the work it times them beside (bench
     * generate's decode warm-up runs its passes).
     */
    private static final long WARMUP_NANOS = 300_000_000L;

    /** Units of {@link RowReader#compute} a compute pass runs: ~2x10^8 multiply-adds at 256 bits, a few ms. */
    private static final int COMPUTE_UNITS = 512;

    private final Arena arena = Arena.ofShared();
    private final RowReader reader;
    private final MemorySegment buffer;
    private MemorySegment copyTarget; // allocated by the first copy pass
    private long bestCopy = Long.MAX_VALUE; // best copy() time so far, ns
    private int copies;
    private final long rowBytes;
    private final int rowFloats;
    private final int rows;
    private float sink;

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
        this.buffer = ReservedMemory.reserveHugePages(arena, rows * rowBytes); // as the weights are held
        buffer.fill((byte) 0x3f);   // every page touched before timing; floats of 0.75, never NaN
        this.reader = new RowReader(threads);
        long warmEnd = System.nanoTime() + WARMUP_NANOS;
        int warmRows = Math.min(rows, Math.max(4, (int) ((256 << 10) / rowBytes)));
        while (System.nanoTime() < warmEnd) {
            sink += reader.read(buffer, rowFloats, warmRows); // the pass's own path: its hand-off and loop
        }
    }

    /** Bytes one {@link #pass()} reads. */
    public long bufferBytes() {
        return rows * rowBytes;
    }

    /** Reads the whole buffer once across the threads; returns the time it took, in nanoseconds. */
    public long pass() {
        long t0 = System.nanoTime();
        sink += reader.read(buffer, rowFloats, rows);
        long t = System.nanoTime() - t0;
        if (Float.isNaN(sink)) {   // keeps the sums observable, so the reads cannot be dropped
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
     * One timed copy of the buffer into a second native buffer of its size ({@link RowReader#copy}:
     * {@link MemorySegment#copy} on each of the forward pass's threads, as a read pass splits the
     * rows); the best so far is kept for {@link #bestCopyBytesPerSecond}. A bench spreads its
     * copies over its run, as it does its read passes, so that a neighbour busy for a moment does not
     * slow every copy (20 copies in a row of 116 MB once measured 15 GB/s where 61.6 MB, minutes
     * earlier, measured 27).
     */
    public void copy() {
        if (copyTarget == null) {
            copyTarget = ReservedMemory.reserveHugePages(arena, bufferBytes());
            copyTarget.fill((byte) 0); // every page touched before timing
        }
        long t0 = System.nanoTime();
        reader.copy(buffer, copyTarget, rowFloats, rows);
        long t = System.nanoTime() - t0;
        if (copyTarget.get(java.lang.foreign.ValueLayout.JAVA_BYTE, bufferBytes() - 1) != buffer.get(
                java.lang.foreign.ValueLayout.JAVA_BYTE, bufferBytes() - 1)) {
            throw new AssertionError("the copy did not reach the buffer's end");
        }
        bestCopy = Math.min(bestCopy, t);
        copies++;
    }

    /** Copies timed so far ({@link #copy}). */
    public int copies() {
        return copies;
    }

    /**
     * Best copy bandwidth over every {@link #copy} so far and {@code passes} more, in bytes copied
     * per second: the figure memcpy benchmarks give (STREAM's Copy counts each byte twice, read and
     * written). Issue 10 words its GGUF speed target against a copy bandwidth; the read pass is the
     * stricter bound.
     */
    public double bestCopyBytesPerSecond(int passes) {
        for (int i = 0; i < passes; i++) {
            copy();
        }
        return bufferBytes() / (bestCopy / 1e9);
    }

    /**
     * How compute and read bandwidth scale from 1 thread to {@code threads}, measured in
     * {@code rounds} rounds of four passes each, A B A B: register-only FMA chains on the caller
     * alone and across the threads ({@link RowReader#compute}, the same split as a read), then
     * this buffer read on the caller alone and across the threads. Each scaling and its two rates
     * come from one round, the one whose ratio is the median ({@link Scaling#ofRounds}): a shared
     * machine's speed moves between rounds, less within one. Takes about {@code rounds} x (4
     * passes) after untimed rounds until the JIT has compiled them (0.3 to 3 s, {@link JitWarmUp}).
     *
     * @param threads threads of the "across" passes (this bound's own pool when it has as many,
     *                else a pool started for the measurement); at least 1
     * @throws IllegalArgumentException for fewer than 1 round or thread
     */
    public Scaling scaling(int threads, int rounds) {
        if (threads < 1 || rounds < 1) {
            throw new IllegalArgumentException("scaling over " + threads + " threads, " + rounds + " rounds");
        }
        RowReader across = threads == reader.threads() ? reader : new RowReader(threads);
        try {
            long[][] times = new long[4][rounds]; // compute on 1, across; read on 1, across
            // Its own paths to the loops (the caller's, a new pool's) are not the decode passes': untimed
            // rounds compile them first, or they read 0.3-0.7 GB/s where the passes had read 40.
            JitWarmUp.ofThisJvm(SCALING_WARMUP_NANOS, 10 * SCALING_WARMUP_NANOS, SCALING_WARMUP_NANOS)
                    .run(() -> round(across, times, 0));
            for (int i = 0; i < rounds; i++) {
                round(across, times, i);
            }
            if (Float.isNaN(sink)) {
                throw new AssertionError("NaN from FMA chains or a buffer of 0.75s");
            }
            return Scaling.ofRounds(threads, COMPUTE_UNITS * RowReader.multiplyAddsPerUnit(), bufferBytes(),
                    times[0], times[1], times[2], times[3]);
        } finally {
            if (across != reader) {
                across.close();
            }
        }
    }

    /** Least warm-up of {@link #scaling}'s rounds, and the time without compilation that ends it, ns. */
    private static final long SCALING_WARMUP_NANOS = 300_000_000L;

    /** One round of {@link #scaling}: its four passes' times go to {@code times[0..3][i]}. */
    private void round(RowReader across, long[][] times, int i) {
        long t0 = System.nanoTime();
        sink += RowReader.computeOnCaller(COMPUTE_UNITS);
        long t1 = System.nanoTime();
        sink += across.compute(COMPUTE_UNITS);
        long t2 = System.nanoTime();
        sink += RowReader.readOnCaller(buffer, rowFloats, rows);
        long t3 = System.nanoTime();
        sink += across.read(buffer, rowFloats, rows);
        long t4 = System.nanoTime();
        times[0][i] = t1 - t0;
        times[1][i] = t2 - t1;
        times[2][i] = t3 - t2;
        times[3][i] = t4 - t3;
    }

    /**
     * Compute and read rates at 1 thread and at {@code threads}, and how each scales; each scaling
     * is the ratio of its own two rates, so a line that prints both cannot contradict itself.
     *
     * <p>A decode step of one sequence is bound by reading its bytes, one of many sequences
     * (32 on the stories15M shape) by its multiply-adds; so the batched / single ratio measured at
     * 1 thread becomes, at {@code threads}, about that ratio x {@code computeScaling / readScaling}
     * (on a VM whose two vCPUs share one core's FMA units, well below the 1-thread ratio).
     *
     * @param threads              threads of the "across" figures
     * @param rounds               A B A B rounds measured
     * @param multiplyAddsPerSec1  FMA lanes per second on one thread, in the round of median compute scaling
     * @param multiplyAddsPerSecN  FMA lanes per second in total across {@code threads}, in the same round
     * @param bytesPerSec1         read bandwidth on one thread, bytes/s, in the round of median read scaling
     * @param bytesPerSecN         read bandwidth across {@code threads}, bytes/s, in the same round
     */
    public record Scaling(int threads, int rounds, double multiplyAddsPerSec1, double multiplyAddsPerSecN,
                          double bytesPerSec1, double bytesPerSecN) {

        /**
         * The scaling of {@code rounds} A B A B rounds (times in ns, one entry per round): for compute
         * and for reads apart, the round whose time at 1 thread / time at {@code threads} is the median
         * (the lower of the middle two for an even count: always a round that was measured) gives
         * both rates.
         *
         * @throws IllegalArgumentException for no rounds, arrays of different lengths or a time below 1 ns
         */
        public static Scaling ofRounds(int threads, long multiplyAdds, long bytes, long[] compute1, long[] computeN,
                                       long[] read1, long[] readN) {
            int rounds = compute1.length;
            if (rounds == 0 || computeN.length != rounds || read1.length != rounds || readN.length != rounds) {
                throw new IllegalArgumentException("scaling rounds: " + rounds + ", " + computeN.length + ", "
                        + read1.length + ", " + readN.length + " times");
            }
            int c = medianRound(compute1, computeN);
            int r = medianRound(read1, readN);
            return new Scaling(threads, rounds, perSecond(multiplyAdds, compute1[c]), perSecond(multiplyAdds, computeN[c]),
                    perSecond(bytes, read1[r]), perSecond(bytes, readN[r]));
        }

        /** The round whose {@code one[i] / many[i]} is the median (lower middle for an even count). */
        private static int medianRound(long[] one, long[] many) {
            Integer[] order = new Integer[one.length];
            for (int i = 0; i < order.length; i++) {
                if (one[i] < 1 || many[i] < 1) {
                    throw new IllegalArgumentException("round " + i + " took " + one[i] + " and " + many[i] + " ns");
                }
                order[i] = i;
            }
            java.util.Arrays.sort(order, java.util.Comparator.comparingDouble(i -> one[i] / (double) many[i]));
            return order[(order.length - 1) / 2];
        }

        private static double perSecond(long amount, long nanos) {
            return amount / (nanos / 1e9);
        }

        /** Compute rate at {@code threads} / at 1 thread, from the same round. */
        public double computeScaling() {
            return multiplyAddsPerSecN / multiplyAddsPerSec1;
        }

        /** Read bandwidth at {@code threads} / at 1 thread, from the same round. */
        public double readScaling() {
            return bytesPerSecN / bytesPerSec1;
        }

        /** The batched / single ratio at {@code threads} that a 1-thread ratio predicts: {@code ratio x compute / read scaling}. */
        public double ratioAtThreads(double oneThreadRatio) {
            return oneThreadRatio * computeScaling() / readScaling();
        }

        /**
         * The 1-thread batched / single ratio that a ratio at {@code threads} predicts, the inverse of
         * {@link #ratioAtThreads}: {@code ratio x read / compute scaling}.
         */
        public double ratioAtOneThread(double ratioAtThreads) {
            return ratioAtThreads * readScaling() / computeScaling();
        }
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
        reader.close();
        arena.close();
    }
}
