package io.kvtier.model;

import io.kvtier.model.tensor.Lanes;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorSpecies;

/**
 * Kernels on {@code jdk.incubator.vector}. The species is a static final constant (the JIT only
 * compiles vector code well when it is), chosen once per JVM from the system property
 * {@code kvtier.vector.bits} (128, 256 or 512; default the CPU's preferred width, and never wider
 * than it, since wider species would be emulated).
 *
 * <p>Written for the JIT, as measured: (1) no helper method takes or returns a vector: the JDK's
 * vector methods are force-inlined, ours are not, and when C2 declined to inline a small helper
 * every vector crossing it was boxed (~10x slower, depending on which model ran first);
 * (2) hot methods stay small: a larger {@code matvec} made C1 fail ("out of virtual registers"),
 * which left it in boxed tier-2 code for good; (3) loads from segments are never masked: tails
 * use the 8- and 4-float species and scalars (a masked segment load cost ~6x a narrow one);
 * (4) inside a loop, a vector carried from trip to trip (an accumulator) is an argument, never the
 * receiver ({@code acc = load.fma(x, acc)}, {@code mv = load.max(mv)}): C2 types such a vector by
 * its declared class, so a call on it stays virtual unless profiled, and was left boxed in
 * softmax. Array-only elementwise kernels ({@link VectorElementwise}) keep masked tails.
 *
 * <p>Matrix products keep several independent accumulators so that FMA latency is hidden. The
 * batched product of a vector of activation rows or more is {@link PackedMatmul} (vectorised across
 * the batch, no lane reductions); smaller batches work on tiles of 4 weight rows x 4 activation
 * rows: each weight vector loaded feeds 4 FMAs, each weight row comes from memory once and from L1
 * for the rest of the batch.
 */
final class VectorKernels implements Kernels {

    static final String BITS_PROPERTY = "kvtier.vector.bits";
    static final VectorSpecies<Float> S = species(System.getProperty(BITS_PROPERTY));
    static final VectorKernels INSTANCE = new VectorKernels(false);

    /**
     * Per-thread scratch of {@link #rows4}, {@link #matmulRowwise} and {@link #tail}: the lanes of four
     * row sums, of a 4 x 4 tile's sixteen, or of a tail's narrow products. A {@code new float[]} per
     * call was not scalar-replaced (vector stores into it) and was most of what single-sequence
     * decode allocated: 14.2 KB a token on stories260K. Every user reads back what it stored before
     * it calls another (a {@code tail} called from {@code rows4} writes past the four row sums'
     * lanes), so the calls may nest.
     */
    private static final ThreadLocal<float[]> ROW_SUMS = ThreadLocal.withInitial(() -> new float[16 * S.length()]);

    @Override
    public void prepareThread() {
        ROW_SUMS.get();
        VectorAttention.prepareThread();
        PackedMatmul.prepareThread();
        io.kvtier.model.tensor.QuantMatmul.prepareThread();
    }
    /** {@link #batchInvariant()}: softmax, silu and swiglu with {@link Math#exp} per value. */
    private static final VectorKernels SCALAR_EXP = new VectorKernels(true);
    private static final int L = S.length();
    /** Narrow species for tails: 8 and 4 floats. */
    private static final VectorSpecies<Float> S8 = FloatVector.SPECIES_256;
    private static final VectorSpecies<Float> S4 = FloatVector.SPECIES_128;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /** Whether softmax, silu and swiglu take {@link ScalarKernels}' loops (one exp in every JIT tier). */
    private final boolean scalarExp;

    private VectorKernels(boolean scalarExp) {
        this.scalarExp = scalarExp;
    }

    @Override
    public Kernels batchInvariant() {
        return SCALAR_EXP;
    }

    /**
     * The species for a {@code kvtier.vector.bits} value (null or blank = preferred).
     *
     * @throws IllegalArgumentException for values other than 128, 256, 512
     */
    static VectorSpecies<Float> species(String bits) {
        VectorSpecies<Float> preferred = FloatVector.SPECIES_PREFERRED;
        if (bits == null || bits.isBlank()) {
            return preferred;
        }
        VectorSpecies<Float> asked = switch (bits.strip()) {
            case "128" -> FloatVector.SPECIES_128;
            case "256" -> FloatVector.SPECIES_256;
            case "512" -> FloatVector.SPECIES_512;
            default -> throw new IllegalArgumentException(
                    BITS_PROPERTY + " must be 128, 256 or 512, got '" + bits + "'");
        };
        return asked.vectorBitSize() <= preferred.vectorBitSize() ? asked : preferred;
    }

    @Override
    public String name() {
        return "vector-" + S.vectorBitSize() + (scalarExp ? "-scalar-exp" : "");
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        FloatVector s0 = FloatVector.zero(S), s1 = s0, s2 = s0, s3 = s0;
        int i = 0;
        for (; i + 4 * L <= n; i += 4 * L) {
            s0 = FloatVector.fromArray(S, a, aOff + i).fma(FloatVector.fromArray(S, b, bOff + i), s0);
            s1 = FloatVector.fromArray(S, a, aOff + i + L).fma(FloatVector.fromArray(S, b, bOff + i + L), s1);
            s2 = FloatVector.fromArray(S, a, aOff + i + 2 * L).fma(FloatVector.fromArray(S, b, bOff + i + 2 * L), s2);
            s3 = FloatVector.fromArray(S, a, aOff + i + 3 * L).fma(FloatVector.fromArray(S, b, bOff + i + 3 * L), s3);
        }
        for (; i + L <= n; i += L) {
            s0 = FloatVector.fromArray(S, a, aOff + i).fma(FloatVector.fromArray(S, b, bOff + i), s0);
        }
        if (i < n) {
            VectorMask<Float> m = S.indexInRange(i, n);
            s1 = FloatVector.fromArray(S, a, aOff + i, m).fma(FloatVector.fromArray(S, b, bOff + i, m), s1);
        }
        return Lanes.sum(s0.add(s1).add(s2.add(s3)));
    }

    @Override
    public float dot(MemorySegment a, long aByteOff, float[] b, int bOff, int n) {
        FloatVector s0 = FloatVector.zero(S), s1 = s0, s2 = s0, s3 = s0;
        int i = 0;
        for (; i + 4 * L <= n; i += 4 * L) {
            long o = aByteOff + (long) i * Float.BYTES;
            s0 = FloatVector.fromMemorySegment(S, a, o, LE).fma(FloatVector.fromArray(S, b, bOff + i), s0);
            s1 = FloatVector.fromMemorySegment(S, a, o + L * 4L, LE).fma(FloatVector.fromArray(S, b, bOff + i + L), s1);
            s2 = FloatVector.fromMemorySegment(S, a, o + L * 8L, LE).fma(FloatVector.fromArray(S, b, bOff + i + 2 * L), s2);
            s3 = FloatVector.fromMemorySegment(S, a, o + L * 12L, LE).fma(FloatVector.fromArray(S, b, bOff + i + 3 * L), s3);
        }
        for (; i + L <= n; i += L) {
            s0 = FloatVector.fromMemorySegment(S, a, aByteOff + (long) i * Float.BYTES, LE).fma(FloatVector.fromArray(S, b, bOff + i), s0);
        }
        float sum = Lanes.sum(s0.add(s1).add(s2.add(s3)));
        // The tail (and short vectors such as an 8-float attention head) with narrower species:
        // a masked load from a segment costs several times an unmasked narrow one.
        return i < n ? sum + tail(a, aByteOff + (long) i * Float.BYTES, b, bOff + i, n - i, ROW_SUMS.get(), 0) : sum;
    }

    @Override
    public void axpy(float alpha, MemorySegment x, long xByteOff, float[] y, int yOff, int n) {
        FloatVector av = FloatVector.broadcast(S, alpha);
        int i = 0;
        for (; i + L <= n; i += L) {
            FloatVector.fromMemorySegment(S, x, xByteOff + (long) i * Float.BYTES, LE).fma(av, FloatVector.fromArray(S, y, yOff + i))
                    .intoArray(y, yOff + i);
        }
        if (L > 8 && i + 8 <= n) {
            FloatVector.fromMemorySegment(S8, x, xByteOff + (long) i * Float.BYTES, LE)
                    .fma(FloatVector.broadcast(S8, alpha), FloatVector.fromArray(S8, y, yOff + i)).intoArray(y, yOff + i);
            i += 8;
        }
        if (L > 4 && i + 4 <= n) {
            FloatVector.fromMemorySegment(S4, x, xByteOff + (long) i * Float.BYTES, LE)
                    .fma(FloatVector.broadcast(S4, alpha), FloatVector.fromArray(S4, y, yOff + i)).intoArray(y, yOff + i);
            i += 4;
        }
        for (; i < n; i++) {
            y[yOff + i] += alpha * x.get(ScalarKernels.F32, xByteOff + (long) i * Float.BYTES);
        }
    }

    @Override
    public void scores(MemorySegment k, long kByteOff, long strideBytes, int count, float[] q, int qOff, int n,
                       float scale, float[] scores, int sOff) {
        for (int i = 0; i < count; i++) {
            scores[sOff + i] = dot(k, kByteOff + i * strideBytes, q, qOff, n) * scale;
        }
    }

    @Override
    public void weightedSum(MemorySegment v, long vByteOff, long strideBytes, int count, float[] w, int wOff,
                            float[] y, int yOff, int n) {
        // Column chunk outside, values inside: the accumulator stays in a register for the whole
        // block instead of a load-FMA-store round trip through y per value.
        int j = 0;
        for (; j + L <= n; j += L) {
            FloatVector acc = FloatVector.fromArray(S, y, yOff + j);
            long o = vByteOff + (long) j * Float.BYTES;
            for (int i = 0; i < count; i++) {
                acc = FloatVector.fromMemorySegment(S, v, o + i * strideBytes, LE).fma(FloatVector.broadcast(S, w[wOff + i]), acc);
            }
            acc.intoArray(y, yOff + j);
        }
        if (L > 8 && j + 8 <= n) {
            FloatVector acc = FloatVector.fromArray(S8, y, yOff + j);
            long o = vByteOff + (long) j * Float.BYTES;
            for (int i = 0; i < count; i++) {
                acc = FloatVector.fromMemorySegment(S8, v, o + i * strideBytes, LE)
                        .fma(FloatVector.broadcast(S8, w[wOff + i]), acc);
            }
            acc.intoArray(y, yOff + j);
            j += 8;
        }
        if (L > 4 && j + 4 <= n) {
            FloatVector acc = FloatVector.fromArray(S4, y, yOff + j);
            long o = vByteOff + (long) j * Float.BYTES;
            for (int i = 0; i < count; i++) {
                acc = FloatVector.fromMemorySegment(S4, v, o + i * strideBytes, LE)
                        .fma(FloatVector.broadcast(S4, w[wOff + i]), acc);
            }
            acc.intoArray(y, yOff + j);
            j += 4;
        }
        for (; j < n; j++) {
            float acc = y[yOff + j];
            for (int i = 0; i < count; i++) {
                acc += w[wOff + i] * v.get(ScalarKernels.F32, vByteOff + i * strideBytes + (long) j * Float.BYTES);
            }
            y[yOff + j] = acc;
        }
    }

    /**
     * One chain of FMAs per head over its whole vectors, then one lane reduction: a head of
     * {@code n} floats is read as {@code n / L} loads of the row. Heads that are not whole vectors
     * (stories260K's 8 floats at 512 bits) take the per-head path.
     */
    @Override
    public void scoresRow(MemorySegment k, long rowByteOff, int hFrom, int hTo, int group, int n, float[] q, int qOff,
                          float scale, float[] scores, int sOff, int sStride) {
        if (n % L != 0) {
            Kernels.super.scoresRow(k, rowByteOff, hFrom, hTo, group, n, q, qOff, scale, scores, sOff, sStride);
            return;
        }
        for (int h = hFrom, si = sOff; h < hTo; h++, si += sStride) {
            long o = rowByteOff + (long) (h / group) * n * Float.BYTES;
            int qh = qOff + h * n;
            FloatVector acc = FloatVector.zero(S);
            for (int j = 0; j < n; j += L) {
                acc = FloatVector.fromMemorySegment(S, k, o + (long) j * Float.BYTES, LE).fma(FloatVector.fromArray(S, q, qh + j), acc);
            }
            scores[si] = Lanes.sum(acc) * scale;
        }
    }

    /** Per head one broadcast weight and {@code n / L} load-FMA-stores of its outputs: the arithmetic of {@link #weightedSum}. */
    @Override
    public void weightedSumRow(MemorySegment v, long rowByteOff, int hFrom, int hTo, int group, int n, float[] w,
                               int wOff, int wStride, float[] y, int yOff) {
        if (n % L != 0) {
            Kernels.super.weightedSumRow(v, rowByteOff, hFrom, hTo, group, n, w, wOff, wStride, y, yOff);
            return;
        }
        for (int h = hFrom, wi = wOff; h < hTo; h++, wi += wStride) {
            long o = rowByteOff + (long) (h / group) * n * Float.BYTES;
            int yh = yOff + h * n;
            FloatVector wv = FloatVector.broadcast(S, w[wi]);
            for (int j = 0; j < n; j += L) {
                FloatVector.fromMemorySegment(S, v, o + (long) j * Float.BYTES, LE).fma(wv, FloatVector.fromArray(S, y, yh + j))
                        .intoArray(y, yh + j);
            }
        }
    }

    @Override
    public void scoresBlock(MemorySegment k, long rowByteOff, long slotBytes, int count, int hFrom, int hTo, int group,
                            int n, float[] q, int qOff, float scale, float[] scores, int sOff, int sStride) {
        if (VectorAttention.fits(n)) {
            VectorAttention.scoresBlock(k, rowByteOff, slotBytes, count, hFrom, hTo, group, n, q, qOff, scale, scores, sOff, sStride);
        } else {
            Kernels.super.scoresBlock(k, rowByteOff, slotBytes, count, hFrom, hTo, group, n, q, qOff, scale, scores, sOff, sStride);
        }
    }

    @Override
    public void weightedSumBlock(MemorySegment v, long rowByteOff, long slotBytes, int count, int hFrom, int hTo,
                                 int group, int n, float[] w, int wOff, int wStride, float[] y, int yOff) {
        if (VectorAttention.fits(n)) {
            VectorAttention.weightedSumBlock(v, rowByteOff, slotBytes, count, hFrom, hTo, group, n, w, wOff, wStride, y, yOff);
        } else {
            Kernels.super.weightedSumBlock(v, rowByteOff, slotBytes, count, hFrom, hTo, group, n, w, wOff, wStride, y, yOff);
        }
    }

    @Override
    public void matvec(MemorySegment w, int in, float[] x, int xOff, float[] y, int yOff, int rowFrom, int rowTo) {
        long rowBytes = (long) in * Float.BYTES;
        int r = rowFrom + (rowTo - rowFrom) / 4 * 4;
        rows4(w, rowBytes, in, x, xOff, y, yOff, rowFrom, r);
        for (; r < rowTo; r++) {
            y[yOff + r] = dot(w, r * rowBytes, x, xOff, in);
        }
    }

    /**
     * y[yOff+r] = weight row r . x for rows {@code from..to-1} ({@code to - from} a multiple of 4),
     * four rows at a time: one activation load feeds four FMA chains, and two vectors a row per trip
     * (eight chains, each reduced once at the row's end; C2 does not unroll this loop itself).
     *
     * <p>The four rows of a trip are {@code q} rows apart, {@code q = (to - from) / 4}: rows
     * {@code r, r+q, r+2q, r+3q} for {@code r = from..from+q-1}, so the kernel reads four far-apart
     * linear streams, each of which continues where its previous row ended. Four adjacent rows (the
     * order before) are four short streams that jump ahead by four rows at every group, which the
     * hardware prefetchers follow badly: on the 15M shape the same arithmetic streamed 2.6x slower,
     * on the 110M 1.7x (issue 16, speed12; {@code MatvecReadComparison}). Each row's arithmetic does
     * not depend on which rows share its trip, so the result is bit for bit what the adjacent-row
     * order gave, on any split of the rows. The loop over the rows is here, not in the caller: a
     * call per group of 4 rows streamed 7-10% slower (speed7).
     */
    private static void rows4(MemorySegment w, long rowBytes, int in, float[] x, int xOff, float[] y, int yOff,
                              int from, int to) {
        int q = (to - from) / 4;
        long qBytes = q * rowBytes;
        float[] lanes = ROW_SUMS.get();
        for (int r = from; r < from + q; r++) {
            long o0 = r * rowBytes, o1 = o0 + qBytes, o2 = o1 + qBytes, o3 = o2 + qBytes;
            int yAt = yOff + r;
            FloatVector s0 = FloatVector.zero(S), s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0;
            int k = 0;
            for (; k + 2 * L <= in; k += 2 * L) {
                FloatVector xv = FloatVector.fromArray(S, x, xOff + k);
                FloatVector xw = FloatVector.fromArray(S, x, xOff + k + L);
                long kb = (long) k * Float.BYTES, kc = kb + L * 4L;
                s0 = FloatVector.fromMemorySegment(S, w, o0 + kb, LE).fma(xv, s0);
                s1 = FloatVector.fromMemorySegment(S, w, o1 + kb, LE).fma(xv, s1);
                s2 = FloatVector.fromMemorySegment(S, w, o2 + kb, LE).fma(xv, s2);
                s3 = FloatVector.fromMemorySegment(S, w, o3 + kb, LE).fma(xv, s3);
                t0 = FloatVector.fromMemorySegment(S, w, o0 + kc, LE).fma(xw, t0);
                t1 = FloatVector.fromMemorySegment(S, w, o1 + kc, LE).fma(xw, t1);
                t2 = FloatVector.fromMemorySegment(S, w, o2 + kc, LE).fma(xw, t2);
                t3 = FloatVector.fromMemorySegment(S, w, o3 + kc, LE).fma(xw, t3);
            }
            if (k + L <= in) {
                FloatVector xv = FloatVector.fromArray(S, x, xOff + k);
                long kb = (long) k * Float.BYTES;
                s0 = FloatVector.fromMemorySegment(S, w, o0 + kb, LE).fma(xv, s0);
                s1 = FloatVector.fromMemorySegment(S, w, o1 + kb, LE).fma(xv, s1);
                s2 = FloatVector.fromMemorySegment(S, w, o2 + kb, LE).fma(xv, s2);
                s3 = FloatVector.fromMemorySegment(S, w, o3 + kb, LE).fma(xv, s3);
                k += L;
            }
            // The row sums from stored lanes, in scalar code with Lanes.sum's order: C2 ran out of
            // nodes (NodeCountInliningCutoff) before it inlined the fourth Lanes.sum of this loop on
            // 512-bit vectors, and boxed that vector on every trip (stories260K decode: 165-199 KB a token).
            s0.add(t0).intoArray(lanes, 0);
            s1.add(t1).intoArray(lanes, L);
            s2.add(t2).intoArray(lanes, 2 * L);
            s3.add(t3).intoArray(lanes, 3 * L);
            y[yAt] = Lanes.sum(lanes, 0, L);
            y[yAt + q] = Lanes.sum(lanes, L, L);
            y[yAt + 2 * q] = Lanes.sum(lanes, 2 * L, L);
            y[yAt + 3 * q] = Lanes.sum(lanes, 3 * L, L);
            if (k < in) {
                long kb = (long) k * Float.BYTES;
                y[yAt] += tail(w, o0 + kb, x, xOff + k, in - k, lanes, 4 * L);
                y[yAt + q] += tail(w, o1 + kb, x, xOff + k, in - k, lanes, 4 * L);
                y[yAt + 2 * q] += tail(w, o2 + kb, x, xOff + k, in - k, lanes, 4 * L);
                y[yAt + 3 * q] += tail(w, o3 + kb, x, xOff + k, in - k, lanes, 4 * L);
            }
        }
    }

    /**
     * Sum of the floats at bytes {@code from..to-1} ({@code to - from} a multiple of 4), read as
     * four linear streams a quarter of the range apart, four vector loads a stream per trip, then
     * the rest linearly: only added, no kernel that reads the same bytes can be faster. It is the
     * fastest read of a buffer this code base has found (issue 16, speed12, one thread, CPU time,
     * {@code MatvecReadComparison}): 1.5-1.6x one linear stream and 2.7x four adjacent rows at a
     * time (the read pass before) on the 15M shape's bytes; 1.4x one stream on the 110M's. Two,
     * six or eight streams, and 2 or 8 vectors a stream per trip, were slower or no faster.
     * For {@link RowReader}.
     */
    static float sumStreams(MemorySegment w, long from, long to) {
        long trip = 4L * L * Float.BYTES;
        long q = (to - from) / 4 / trip * trip;
        long o1 = q, o2 = 2 * q, o3 = 3 * q;
        FloatVector a0 = FloatVector.zero(S), a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0, d0 = a0, d1 = a0;
        for (long o = from; o < from + q; o += trip) {
            a0 = FloatVector.fromMemorySegment(S, w, o, LE).add(a0);
            a1 = FloatVector.fromMemorySegment(S, w, o + L * 4L, LE).add(a1);
            a0 = FloatVector.fromMemorySegment(S, w, o + L * 8L, LE).add(a0);
            a1 = FloatVector.fromMemorySegment(S, w, o + L * 12L, LE).add(a1);
            b0 = FloatVector.fromMemorySegment(S, w, o + o1, LE).add(b0);
            b1 = FloatVector.fromMemorySegment(S, w, o + o1 + L * 4L, LE).add(b1);
            b0 = FloatVector.fromMemorySegment(S, w, o + o1 + L * 8L, LE).add(b0);
            b1 = FloatVector.fromMemorySegment(S, w, o + o1 + L * 12L, LE).add(b1);
            c0 = FloatVector.fromMemorySegment(S, w, o + o2, LE).add(c0);
            c1 = FloatVector.fromMemorySegment(S, w, o + o2 + L * 4L, LE).add(c1);
            c0 = FloatVector.fromMemorySegment(S, w, o + o2 + L * 8L, LE).add(c0);
            c1 = FloatVector.fromMemorySegment(S, w, o + o2 + L * 12L, LE).add(c1);
            d0 = FloatVector.fromMemorySegment(S, w, o + o3, LE).add(d0);
            d1 = FloatVector.fromMemorySegment(S, w, o + o3 + L * 4L, LE).add(d1);
            d0 = FloatVector.fromMemorySegment(S, w, o + o3 + L * 8L, LE).add(d0);
            d1 = FloatVector.fromMemorySegment(S, w, o + o3 + L * 12L, LE).add(d1);
        }
        long o = from + 4 * q;
        for (; o + L * 4L <= to; o += L * 4L) {
            a0 = FloatVector.fromMemorySegment(S, w, o, LE).add(a0);
        }
        float sum = Lanes.sum(a0.add(a1).add(b0.add(b1)).add(c0.add(c1).add(d0.add(d1))));
        for (; o < to; o += Float.BYTES) {
            sum += w.get(ScalarKernels.F32, o);
        }
        return sum;
    }

    /**
     * Dot product of fewer than L floats: narrow species, then scalars (no masks). The narrow
     * products' lanes are summed from {@code lanes[at..at+8)} in scalar code ({@link Lanes#sum(float[],
     * int, int)}, the same bits as the vector sum): inlined four times into {@link #rows4}, a vector
     * {@code Lanes.sum} was not inlined and boxed its argument (stories260K decode, whose FFN input
     * of 172 floats ends in a tail of 12: ~8 KB a token).
     */
    private static float tail(MemorySegment a, long aByteOff, float[] b, int bOff, int n, float[] lanes, int at) {
        float sum = 0f;
        int i = 0;
        if (L > 8 && i + 8 <= n) {
            FloatVector.fromMemorySegment(S8, a, aByteOff, LE).mul(FloatVector.fromArray(S8, b, bOff)).intoArray(lanes, at);
            sum += Lanes.sum(lanes, at, 8);
            i += 8;
        }
        if (L > 4 && i + 4 <= n) {
            FloatVector.fromMemorySegment(S4, a, aByteOff + (long) i * Float.BYTES, LE)
                    .mul(FloatVector.fromArray(S4, b, bOff + i)).intoArray(lanes, at);
            sum += Lanes.sum(lanes, at, 4);
            i += 4;
        }
        for (; i < n; i++) {
            sum += a.get(ScalarKernels.F32, aByteOff + (long) i * Float.BYTES) * b[bOff + i];
        }
        return sum;
    }

    @Override
    public void matmul(MemorySegment w, int in, int out, float[] x, int n, float[] y, int rowFrom, int rowTo) {
        if (n == 1) {
            matvec(w, in, x, 0, y, 0, rowFrom, rowTo);
            return;
        }
        if (PackedMatmul.packs(n)) {
            float[] packed = new float[PackedMatmul.packedLength(n, in)];
            PackedMatmul.pack(x, n, in, packed);
            PackedMatmul.matmul(w, in, out, packed, n, y, rowFrom, rowTo);
            return;
        }
        matmulRowwise(w, in, out, x, n, y, rowFrom, rowTo);
    }

    /**
     * The batched product along weight rows: tiles of 4 weight rows x 4 activation rows, each
     * output reduced across lanes at the end of its row. For batches too small to pack (fewer
     * than a vector of rows); package-private for the comparison with {@link PackedMatmul}.
     */
    void matmulRowwise(MemorySegment w, int in, int out, float[] x, int n, float[] y, int rowFrom, int rowTo) {
        long rowBytes = (long) in * Float.BYTES;
        float[] lanes = ROW_SUMS.get(); // tile4x4's accumulators, stored for their sums
        int r = rowFrom;
        for (; r + 4 <= rowTo; r += 4) {
            int i = 0;
            for (; i + 4 <= n; i += 4) {
                tile4x4(w, r * rowBytes, rowBytes, in, x, i * in, y, i * out + r, out, lanes);
            }
            for (; i < n; i++) {
                matvec(w, in, x, i * in, y, i * out, r, r + 4);
            }
        }
        for (; r < rowTo; r++) {
            for (int i = 0; i < n; i++) {
                y[i * out + r] = dot(w, r * rowBytes, x, i * in, in);
            }
        }
    }

    @Override
    public int packedLength(int n, int in) {
        return PackedMatmul.packs(n) ? PackedMatmul.packedLength(n, in) : n * in;
    }

    @Override
    public void packRows(float[] x, int n, int in, float[] packed) {
        if (PackedMatmul.packs(n)) {
            PackedMatmul.pack(x, n, in, packed);
        } else {
            System.arraycopy(x, 0, packed, 0, n * in);
        }
    }

    @Override
    public void matmulPacked(MemorySegment w, int in, int out, float[] packed, int n, float[] y, int rowFrom, int rowTo) {
        if (PackedMatmul.packs(n)) {
            PackedMatmul.matmul(w, in, out, packed, n, y, rowFrom, rowTo);
        } else {
            matmul(w, in, out, packed, n, y, rowFrom, rowTo);
        }
    }

    /**
     * Y[i..i+3][r..r+3] for 4 weight rows starting at byte {@code wOff} and 4 activation rows
     * starting at {@code xOff}; 16 accumulators, each loaded vector used 4 times. {@code lanes}
     * (16 L floats, the caller's) takes the accumulators for their sums.
     */
    private static void tile4x4(MemorySegment w, long wOff, long rowBytes, int in, float[] x, int xOff,
                                float[] y, int yOff, int out, float[] lanes) {
        FloatVector a00 = FloatVector.zero(S), a01 = a00, a02 = a00, a03 = a00;
        FloatVector a10 = a00, a11 = a00, a12 = a00, a13 = a00;
        FloatVector a20 = a00, a21 = a00, a22 = a00, a23 = a00;
        FloatVector a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        long o0 = wOff, o1 = o0 + rowBytes, o2 = o1 + rowBytes, o3 = o2 + rowBytes;
        int x0 = xOff, x1 = x0 + in, x2 = x1 + in, x3 = x2 + in;
        int k = 0;
        for (; k + L <= in; k += L) {
            long kb = (long) k * Float.BYTES;
            FloatVector w0 = FloatVector.fromMemorySegment(S, w, o0 + kb, LE), w1 = FloatVector.fromMemorySegment(S, w, o1 + kb, LE), w2 = FloatVector.fromMemorySegment(S, w, o2 + kb, LE), w3 = FloatVector.fromMemorySegment(S, w, o3 + kb, LE);
            FloatVector v = FloatVector.fromArray(S, x, x0 + k);
            a00 = w0.fma(v, a00); a10 = w1.fma(v, a10); a20 = w2.fma(v, a20); a30 = w3.fma(v, a30);
            v = FloatVector.fromArray(S, x, x1 + k);
            a01 = w0.fma(v, a01); a11 = w1.fma(v, a11); a21 = w2.fma(v, a21); a31 = w3.fma(v, a31);
            v = FloatVector.fromArray(S, x, x2 + k);
            a02 = w0.fma(v, a02); a12 = w1.fma(v, a12); a22 = w2.fma(v, a22); a32 = w3.fma(v, a32);
            v = FloatVector.fromArray(S, x, x3 + k);
            a03 = w0.fma(v, a03); a13 = w1.fma(v, a13); a23 = w2.fma(v, a23); a33 = w3.fma(v, a33);
        }
        // y row i+j, column r+q gets a_qj. The sums from stored lanes, in scalar code with
        // Lanes.sum's order (the same bits): with 16 Lanes.sum(FloatVector) calls here C2 ran out of
        // nodes (NodeCountInliningCutoff) on 512-bit vectors and boxed the accumulators it did not
        // inline, on every call: an 8-token step of the 110M shape allocated 59.5 MB (a 1000-token
        // prefill, through PackedMatmul, 0.2 MB), and where the heap's pages were not resident the
        // step took 4x as long (docs/design-notes.md, "Vector code that C2 cannot finish inlining boxes").
        a00.intoArray(lanes, 0);
        a10.intoArray(lanes, L);
        a20.intoArray(lanes, 2 * L);
        a30.intoArray(lanes, 3 * L);
        a01.intoArray(lanes, 4 * L);
        a11.intoArray(lanes, 5 * L);
        a21.intoArray(lanes, 6 * L);
        a31.intoArray(lanes, 7 * L);
        a02.intoArray(lanes, 8 * L);
        a12.intoArray(lanes, 9 * L);
        a22.intoArray(lanes, 10 * L);
        a32.intoArray(lanes, 11 * L);
        a03.intoArray(lanes, 12 * L);
        a13.intoArray(lanes, 13 * L);
        a23.intoArray(lanes, 14 * L);
        a33.intoArray(lanes, 15 * L);
        for (int j = 0; j < 4; j++) {
            int yRow = yOff + j * out;
            for (int q = 0; q < 4; q++) {
                y[yRow + q] = Lanes.sum(lanes, (4 * j + q) * L, L);
            }
        }
        if (k < in) {
            long kb = (long) k * Float.BYTES;
            int rest = in - k;
            for (int q = 0; q < 4; q++) {
                long wq = wOff + q * rowBytes + kb;
                for (int j = 0; j < 4; j++) {
                    y[yOff + j * out + q] += tail(w, wq, x, xOff + j * in + k, rest, lanes, 0); // its sums are in y already
                }
            }
        }
    }

    @Override
    public void rmsnorm(float[] out, int outOff, float[] x, int xOff, MemorySegment weight, int n, float eps) {
        VectorElementwise.rmsnorm(out, outOff, x, xOff, weight, n, eps);
    }

    @Override
    public void softmax(float[] x, int off, int n) {
        if (scalarExp) {
            ScalarKernels.INSTANCE.softmax(x, off, n);
        } else {
            VectorElementwise.softmax(x, off, n);
        }
    }

    @Override
    public void silu(float[] x, int off, int n) {
        if (scalarExp) {
            ScalarKernels.INSTANCE.silu(x, off, n);
        } else {
            VectorElementwise.silu(x, off, n);
        }
    }

    @Override
    public void swiglu(float[] gate, int gOff, float[] up, int uOff, int n) {
        if (scalarExp) {
            ScalarKernels.INSTANCE.swiglu(gate, gOff, up, uOff, n);
        } else {
            VectorElementwise.swiglu(gate, gOff, up, uOff, n);
        }
    }

    @Override
    public void add(float[] y, int yOff, float[] x, int xOff, int n) {
        VectorElementwise.add(y, yOff, x, xOff, n);
    }
}
