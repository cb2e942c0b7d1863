package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The vector kernels against the scalar reference on random inputs of awkward sizes.
 *
 * <p>Tolerance: sums are reordered by the vector code, so a dot product of n terms may differ
 * by about n * 2^-24 times the sum of |terms|; we allow {@code 1e-5 * sum|a_i b_i| + 1e-6}
 * (above that bound for n = 1000, far above the typical sqrt(n) error). Elementwise functions
 * built on exp (softmax, silu) may differ by a few ulps: {@code 1e-5} relative plus {@code 1e-7}.
 */
class KernelsDifferentialTest {

    private static final int[] SIZES = {1, 7, 63, 64, 65, 1000};
    private static final Kernels SCALAR = Kernels.scalar();
    private static final Kernels VECTOR = Kernels.best();

    private final Arena arena = Arena.ofConfined();

    @AfterEach
    void close() {
        arena.close();
    }

    @Test
    void vectorKernelsAreInUse() {
        assertThat(VECTOR.name()).startsWith("vector-");
        // The surefire executions at 128 and 256 bits (kvtier-engine/pom.xml) must really run at that width.
        String bits = System.getProperty(VectorKernels.BITS_PROPERTY);
        if (bits != null && Integer.parseInt(bits) <= jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.vectorBitSize()) {
            assertThat(VECTOR.name()).isEqualTo("vector-" + bits);
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3})
    void dotAgrees(long seed) {
        Random r = new Random(seed);
        for (int n : SIZES) {
            float[] a = random(r, n + 3), b = random(r, n + 5);
            MemorySegment seg = segment(a);
            float ref = SCALAR.dot(a, 3, b, 5, n);
            double tol = tolerance(a, 3, b, 5, n);
            assertThat((double) VECTOR.dot(a, 3, b, 5, n)).as("seed %d, n %d", seed, n).isCloseTo(ref, within(tol));
            assertThat((double) VECTOR.dot(seg, 12, b, 5, n)).as("seed %d, n %d (segment)", seed, n)
                    .isCloseTo(ref, within(tol));
            assertThat((double) SCALAR.dot(seg, 12, b, 5, n)).as("seed %d, n %d (scalar segment)", seed, n)
                    .isCloseTo(ref, within(0));
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {4, 5})
    void axpyAgrees(long seed) {
        Random r = new Random(seed);
        for (int n : SIZES) {
            float[] x = random(r, n + 1);
            float[] y1 = random(r, n + 2);
            float[] y2 = y1.clone();
            float alpha = r.nextFloat() - 0.5f;
            SCALAR.axpy(alpha, segment(x), 4, y1, 2, n);
            VECTOR.axpy(alpha, segment(x), 4, y2, 2, n);
            assertClose(y2, y1, 1e-6, "seed " + seed + ", n " + n);
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {14, 15})
    void blockScoresAndWeightedSumsAgree(long seed) {
        Random r = new Random(seed);
        for (int n : SIZES) {
            for (int count : new int[] {1, 7, 16}) {
                int stride = n + 5;                       // floats between consecutive slots
                float[] kv = random(r, count * stride + 2);
                MemorySegment seg = segment(kv);
                float[] q = random(r, n + 1);
                float[] ref = new float[count + 1], got = new float[count + 1];
                SCALAR.scores(seg, 8, stride * 4L, count, q, 1, n, 0.125f, ref, 1);
                VECTOR.scores(seg, 8, stride * 4L, count, q, 1, n, 0.125f, got, 1);
                for (int i = 0; i < count; i++) {
                    double tol = 0.125 * tolerance(kv, 2 + i * stride, q, 1, n);
                    assertThat((double) got[1 + i]).as("seed %d, n %d, count %d, score %d", seed, n, count, i)
                            .isCloseTo(ref[1 + i], within(tol));
                }
                float[] w = random(r, count);
                float[] y1 = random(r, n + 3), y2 = y1.clone();
                SCALAR.weightedSum(seg, 8, stride * 4L, count, w, 0, y1, 3, n);
                VECTOR.weightedSum(seg, 8, stride * 4L, count, w, 0, y2, 3, n);
                for (int j = 0; j < n + 3; j++) {
                    assertThat((double) y2[j]).as("seed %d, n %d, count %d, y[%d]", seed, n, count, j)
                            .isCloseTo(y1[j], within(1e-5 * count + 1e-6));
                }
            }
        }
    }

    /**
     * The slot-row kernels of attention (all heads of one KV slot) against the scalar reference,
     * and against the per-head kernels they replace: the weighted sums bit for bit (the same
     * fma per output float), the scores within the dot tolerance. Head sizes whole vectors or not
     * (the vector kernels fall back to per head), grouped query heads, a sub-range of heads.
     */
    @ParameterizedTest
    @ValueSource(longs = {16, 17, 18})
    void slotRowScoresAndWeightedSumsAgreeWithThePerHeadKernels(long seed) {
        Random r = new Random(seed);
        for (int n : new int[] {4, 7, 8, 16, 48, 64, 65, 128}) {
            int group = new int[] {1, 2, 3}[r.nextInt(3)];
            int kvHeads = 1 + r.nextInt(4);
            int heads = kvHeads * group;
            int hFrom = r.nextInt(heads);
            int hTo = hFrom + 1 + r.nextInt(heads - hFrom);
            int stride = 3 + r.nextInt(5);           // scores/weights of consecutive heads this far apart
            String what = String.format("seed %d, n %d, heads %d, group %d, heads %d..%d", seed, n, heads, group, hFrom, hTo - 1);
            float[] row = random(r, kvHeads * n + 3);
            MemorySegment seg = segment(row);
            float[] q = random(r, heads * n + 2);
            float[] ref = new float[heads * stride + 1], got = new float[heads * stride + 1], perHead = new float[heads * stride + 1];
            SCALAR.scoresRow(seg, 12, hFrom, hTo, group, n, q, 2, 0.125f, ref, 1, stride);
            VECTOR.scoresRow(seg, 12, hFrom, hTo, group, n, q, 2, 0.125f, got, 1, stride);
            for (int h = hFrom; h < hTo; h++) {
                int si = 1 + (h - hFrom) * stride;
                SCALAR.scores(seg, 12 + (long) (h / group) * n * 4, 0, 1, q, 2 + h * n, n, 0.125f, perHead, si);
                assertThat(ref[si]).as("%s, scalar head %d", what, h).isEqualTo(perHead[si]);
                double tol = 0.125 * tolerance(row, 3 + (h / group) * n, q, 2 + h * n, n);
                assertThat((double) got[si]).as("%s, head %d", what, h).isCloseTo(ref[si], within(tol));
            }
            float[] w = random(r, heads * stride + 1);
            float[] y0 = random(r, heads * n + 5), y1 = y0.clone(), y2 = y0.clone(), y3 = y0.clone();
            SCALAR.weightedSumRow(seg, 12, hFrom, hTo, group, n, w, 1, stride, y1, 5);
            VECTOR.weightedSumRow(seg, 12, hFrom, hTo, group, n, w, 1, stride, y2, 5);
            for (int h = hFrom; h < hTo; h++) {
                VECTOR.weightedSum(seg, 12 + (long) (h / group) * n * 4, 0, 1, w, 1 + (h - hFrom) * stride, y3, 5 + h * n, n);
            }
            for (int j = 0; j < y0.length; j++) {
                int h = (j - 5) / n;
                boolean inRange = j >= 5 && h >= hFrom && h < hTo;
                assertThat(y2[j]).as("%s, y[%d] against per-head weightedSum", what, j).isEqualTo(y3[j]);
                if (!inRange) {
                    assertThat(y2[j]).as("%s, y[%d] outside the heads is untouched", what, j).isEqualTo(y0[j]);
                }
                assertThat((double) y2[j]).as("%s, y[%d]", what, j).isCloseTo(y1[j], within(1e-5));
            }
        }
    }

    /**
     * The block kernels of attention (every head over a run of consecutive KV slots) against the
     * scalar reference: scores within the dot tolerance (the vector kernels add the lanes of L
     * slots in a tree), weighted sums bit for bit what the slot-row kernel gives slot by slot (and
     * close to the scalar ones). Runs of 1 slot to more than two vectors of slots (the tree's
     * groups and the per-slot rest), rows padded apart, head sizes whole vectors or not, grouped
     * query heads, a sub-range of heads; nothing outside the outputs is written.
     */
    @ParameterizedTest
    @ValueSource(longs = {26, 27, 28})
    void slotBlockScoresAndWeightedSumsAgree(long seed) {
        Random r = new Random(seed);
        int[] counts = {1, 3, 4, 7, 8, 15, 16, 17, 33, 37};
        for (int c = 0; c < counts.length; c++) {
            int count = counts[c];
            // every head size meets several run lengths over the seeds: narrower than a vector
            // (masked at 512 and 256 bits), not a multiple of 4, whole vectors
            int[] sizes = {4, 7, 8, 12, 16, 48, 64, 65, 128};
            int n = sizes[(c + (int) seed) % sizes.length];
            int group = 1 + r.nextInt(3);
            int kvHeads = 1 + r.nextInt(4);
            int heads = kvHeads * group;
            int hFrom = r.nextInt(heads);
            int hTo = hFrom + 1 + r.nextInt(heads - hFrom);
            int rowFloats = kvHeads * n + r.nextInt(3);          // a slot's row, padded
            int stride = count + 2;                               // scores/weights of consecutive heads this far apart
            String what = String.format("seed %d, %d slots, n %d, heads %d, group %d, heads %d..%d", seed, count, n, heads,
                    group, hFrom, hTo - 1);
            float[] rows = random(r, count * rowFloats + 3);
            MemorySegment seg = segment(rows);
            long slotBytes = (long) rowFloats * Float.BYTES;
            float[] q = random(r, heads * n + 2);
            float[] ref = new float[heads * stride + 1], got = new float[heads * stride + 1];
            SCALAR.scoresBlock(seg, 12, slotBytes, count, hFrom, hTo, group, n, q, 2, 0.125f, ref, 1, stride);
            VECTOR.scoresBlock(seg, 12, slotBytes, count, hFrom, hTo, group, n, q, 2, 0.125f, got, 1, stride);
            for (int h = hFrom; h < hTo; h++) {
                for (int i = 0; i < count; i++) {
                    int si = 1 + (h - hFrom) * stride + i;
                    double tol = 0.125 * tolerance(rows, 3 + i * rowFloats + (h / group) * n, q, 2 + h * n, n);
                    assertThat((double) got[si]).as("%s, head %d, slot %d", what, h, i).isCloseTo(ref[si], within(tol));
                    assertThat(ref[si]).as("%s, head %d, slot %d is set", what, h, i).isNotZero();
                }
            }
            for (int j = 0; j < got.length; j++) {
                int rel = j - 1;
                boolean written = rel >= 0 && rel < (hTo - hFrom) * stride && rel % stride < count;
                if (!written) {
                    assertThat(got[j]).as("%s, score %d outside the run is untouched", what, j).isZero();
                }
            }
            float[] w = random(r, heads * stride + 1);
            float[] y0 = random(r, heads * n + 5), y1 = y0.clone(), y2 = y0.clone(), y3 = y0.clone();
            SCALAR.weightedSumBlock(seg, 12, slotBytes, count, hFrom, hTo, group, n, w, 1, stride, y1, 5);
            VECTOR.weightedSumBlock(seg, 12, slotBytes, count, hFrom, hTo, group, n, w, 1, stride, y2, 5);
            for (int i = 0; i < count; i++) {
                VECTOR.weightedSumRow(seg, 12 + i * slotBytes, hFrom, hTo, group, n, w, 1 + i, stride, y3, 5);
            }
            for (int j = 0; j < y0.length; j++) {
                int h = (j - 5) / n;
                boolean inRange = j >= 5 && h >= hFrom && h < hTo;
                assertThat(y2[j]).as("%s, y[%d] against the slot-row kernel", what, j).isEqualTo(y3[j]);
                if (!inRange) {
                    assertThat(y2[j]).as("%s, y[%d] outside the heads is untouched", what, j).isEqualTo(y0[j]);
                }
                assertThat((double) y2[j]).as("%s, y[%d]", what, j).isCloseTo(y1[j], within(1e-5 * count + 1e-6));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {6, 7})
    void matvecAndMatmulAgreeForEveryBatchSize(long seed) {
        Random r = new Random(seed);
        for (int in : SIZES) {
            for (int out : new int[] {1, 7, 64, 65}) {
                float[] w = random(r, out * in);
                MemorySegment ws = segment(w);
                for (int n : new int[] {1, 2, 4, 5, 8, 9}) {
                    float[] x = random(r, n * in);
                    float[] ref = new float[n * out];
                    float[] got = new float[n * out];
                    SCALAR.matmul(ws, in, out, x, n, ref, 0, out);
                    // in two row ranges, as the pool splits it
                    int split = out / 2 / 4 * 4;
                    VECTOR.matmul(ws, in, out, x, n, got, 0, split);
                    VECTOR.matmul(ws, in, out, x, n, got, split, out);
                    for (int i = 0; i < n; i++) {
                        for (int o = 0; o < out; o++) {
                            double tol = tolerance(w, o * in, x, i * in, in);
                            assertThat((double) got[i * out + o])
                                    .as("seed %d, in %d, out %d, n %d, y[%d][%d]", seed, in, out, n, i, o)
                                    .isCloseTo(ref[i * out + o], within(tol));
                        }
                    }
                    if (n == 1) {
                        float[] mv = new float[out + 3];
                        VECTOR.matvec(ws, in, x, 0, mv, 3, 0, out);
                        for (int o = 0; o < out; o++) {
                            assertThat((double) mv[3 + o]).as("seed %d, in %d, out %d matvec row %d", seed, in, out, o)
                                    .isCloseTo(ref[o], within(tolerance(w, o * in, x, 0, in)));
                        }
                    }
                }
            }
        }
    }

    /**
     * The matrix-vector kernel over row ranges as the pool cuts them (starts at multiples of 4,
     * the last range with a remainder of 1-3 rows), with offsets into x and y: every row within
     * the dot tolerance of the scalar reference, and no y outside a range written. (Not bit for
     * bit against one call: a lane reduction may sum in another order before and after C2
     * compiles it.)
     */
    @ParameterizedTest
    @ValueSource(longs = {21, 22})
    void matvecRowRangesGiveTheRowsOfOneCall(long seed) {
        Random r = new Random(seed);
        for (int in : new int[] {7, 31, 64, 96, 288, 1000}) {
            int out = 4 * (3 + r.nextInt(8)) + 1 + r.nextInt(3);   // a remainder of 1-3 rows
            float[] w = random(r, out * in);
            MemorySegment ws = segment(w);
            float[] x = random(r, in + 5);
            float[] whole = new float[out + 2];
            VECTOR.matvec(ws, in, x, 5, whole, 2, 0, out);
            float[] ref = new float[out];
            SCALAR.matvec(ws, in, x, 5, ref, 0, 0, out);
            float[] parts = new float[out + 2];
            java.util.Arrays.fill(parts, Float.NaN);
            int a = 4 * (1 + r.nextInt(2)), b = a + 4 * (1 + r.nextInt(2));
            int[] cuts = {0, a, b, out};
            for (int c = 0; c + 1 < cuts.length; c++) {
                VECTOR.matvec(ws, in, x, 5, parts, 2, cuts[c], cuts[c + 1]);
            }
            String what = String.format("seed %d, in %d, out %d, cuts %d %d", seed, in, out, a, b);
            assertThat(parts[0]).as(what).isNaN();
            assertThat(parts[1]).as(what).isNaN();
            for (int o = 0; o < out; o++) {
                double tol = tolerance(w, o * in, x, 5, in);
                assertThat((double) parts[2 + o]).as("%s, row %d in parts", what, o).isCloseTo(ref[o], within(tol));
                assertThat((double) whole[2 + o]).as("%s, row %d in one call", what, o).isCloseTo(ref[o], within(tol));
            }
            float[] middle = new float[out + 2];
            java.util.Arrays.fill(middle, Float.NaN);
            VECTOR.matvec(ws, in, x, 5, middle, 2, a, b);
            for (int o = 0; o < out; o++) {
                if (o < a || o >= b) {
                    assertThat(middle[2 + o]).as("%s, row %d outside %d..%d", what, o, a, b - 1).isNaN();
                } else {
                    assertThat((double) middle[2 + o]).as("%s, row %d of %d..%d", what, o, a, b - 1)
                            .isCloseTo(ref[o], within(tolerance(w, o * in, x, 5, in)));
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {8, 9})
    void rmsnormAgrees(long seed) {
        Random r = new Random(seed);
        for (int n : SIZES) {
            float[] x = random(r, n + 1);
            MemorySegment weight = segment(random(r, n));
            float[] ref = new float[n + 2], got = new float[n + 2];
            SCALAR.rmsnorm(ref, 2, x, 1, weight, n, 1e-5f);
            VECTOR.rmsnorm(got, 2, x, 1, weight, n, 1e-5f);
            assertClose(got, ref, 1e-5, "seed " + seed + ", n " + n);
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {10, 11})
    void softmaxAgreesAndSumsToOne(long seed) {
        Random r = new Random(seed);
        for (int n : SIZES) {
            float[] ref = random(r, n + 1);
            for (int i = 0; i < ref.length; i++) ref[i] *= 20;   // a wide range of exponents
            float[] got = ref.clone();
            SCALAR.softmax(ref, 1, n);
            VECTOR.softmax(got, 1, n);
            assertClose(got, ref, 1e-5, "seed " + seed + ", n " + n);
            double sum = 0;
            for (int i = 1; i <= n; i++) sum += got[i];
            assertThat(sum).as("seed %d, n %d", seed, n).isCloseTo(1.0, within(1e-5));
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {12, 13})
    void siluAndSwigluAgree(long seed) {
        Random r = new Random(seed);
        for (int n : SIZES) {
            float[] ref = random(r, n + 2);
            for (int i = 0; i < ref.length; i++) ref[i] *= 12;
            float[] got = ref.clone();
            SCALAR.silu(ref, 2, n);
            VECTOR.silu(got, 2, n);
            assertClose(got, ref, 1e-5, "silu seed " + seed + ", n " + n);

            float[] up = random(r, n + 1);
            float[] g1 = random(r, n), g2 = g1.clone();
            SCALAR.swiglu(g1, 0, up, 1, n);
            VECTOR.swiglu(g2, 0, up, 1, n);
            assertClose(g2, g1, 1e-5, "swiglu seed " + seed + ", n " + n);
        }
    }

    @Test
    void scalarKernelsComputeKnownValues() {
        float[] x = {1, 2, 3, 4};
        assertThat(SCALAR.dot(x, 0, x, 0, 4)).isEqualTo(30f);
        float[] out = new float[4];
        SCALAR.rmsnorm(out, 0, x, 0, segment(new float[] {1, 1, 1, 2}), 4, 0f);
        float inv = (float) (1 / Math.sqrt(7.5));
        assertThat(out).containsExactly(new float[] {inv, 2 * inv, 3 * inv, 8 * inv}, org.assertj.core.data.Offset.offset(1e-6f));
        float[] s = {0, (float) Math.log(3)};
        SCALAR.softmax(s, 0, 2);
        assertThat(s).containsExactly(new float[] {0.25f, 0.75f}, org.assertj.core.data.Offset.offset(1e-6f));
        float[] y = new float[2];
        float[] m = new float[6];
        // W [3][2] = {{1,0},{0,1},{1,1}}, X [2][2] = {{5,7},{1,2}} -> Y [2][3]
        SCALAR.matmul(segment(new float[] {1, 0, 0, 1, 1, 1}), 2, 3, new float[] {5, 7, 1, 2}, 2, m, 0, 3);
        assertThat(m).containsExactly(5f, 7f, 12f, 1f, 2f, 3f);
        SCALAR.matvec(segment(new float[] {1, 2, 3, 4}), 2, new float[] {1, 1}, 0, y, 0, 0, 2);
        assertThat(y).containsExactly(3f, 7f);
        float[] z = {0f};
        SCALAR.silu(z, 0, 1);
        assertThat(z).containsExactly(0f);
    }

    private static org.assertj.core.data.Offset<Double> within(double tol) {
        return org.assertj.core.data.Offset.offset(tol);
    }

    private static double tolerance(float[] a, int aOff, float[] b, int bOff, int n) {
        double abs = 0;
        for (int i = 0; i < n; i++) abs += Math.abs((double) a[aOff + i] * b[bOff + i]);
        return 1e-5 * abs + 1e-6;
    }

    private static void assertClose(float[] got, float[] ref, double rel, String what) {
        for (int i = 0; i < ref.length; i++) {
            assertThat((double) got[i]).as("%s, index %d", what, i).isCloseTo(ref[i], within(rel * Math.abs(ref[i]) + 1e-7));
        }
    }

    private static float[] random(Random r, int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) r.nextGaussian();
        return a;
    }

    private MemorySegment segment(float[] a) {
        MemorySegment s = arena.allocate((long) a.length * Float.BYTES + 4, 4);
        MemorySegment.copy(a, 0, s, ScalarKernels.F32, 0, a.length);
        return s;
    }
}
