package io.kvtier.model.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShuffle;

/**
 * The sum of a float vector's lanes in one fixed order in every JIT tier: a tree of lanewise
 * adds of the vector and its lanes rotated by half, a quarter, ... of its length, lane 0 of the
 * result. {@code reduceLanes(ADD)} does not have one order: its Java fallback (interpreter, C1)
 * adds the lanes in sequence, C2's intrinsic pairwise, so the same vector summed in a fresh JVM
 * and after C2 compiled the kernel differed in the last bit for about half of random vectors
 * (and greedy tokens with them on near-tie logits). A lanewise add is one IEEE operation per
 * lane whoever executes it, so this tree gives the same bits everywhere.
 *
 * <p>A helper that takes a vector (VectorKernels' class comment warns of boxing when C2 does not
 * inline such a helper): it is small and its species a constant at every call site, so C2
 * inlines it into the hot kernels; measured with {@code bench generate} (README, GGUF section).
 */
public final class Lanes {

    private static final VectorShuffle<Float> R2 = VectorShuffle.iota(FloatVector.SPECIES_128, 2, 1, true);
    private static final VectorShuffle<Float> R1 = VectorShuffle.iota(FloatVector.SPECIES_128, 1, 1, true);
    private static final VectorShuffle<Float> R4W = VectorShuffle.iota(FloatVector.SPECIES_256, 4, 1, true);
    private static final VectorShuffle<Float> R2W = VectorShuffle.iota(FloatVector.SPECIES_256, 2, 1, true);
    private static final VectorShuffle<Float> R1W = VectorShuffle.iota(FloatVector.SPECIES_256, 1, 1, true);
    private static final VectorShuffle<Float> R8X = VectorShuffle.iota(FloatVector.SPECIES_512, 8, 1, true);
    private static final VectorShuffle<Float> R4X = VectorShuffle.iota(FloatVector.SPECIES_512, 4, 1, true);
    private static final VectorShuffle<Float> R2X = VectorShuffle.iota(FloatVector.SPECIES_512, 2, 1, true);
    private static final VectorShuffle<Float> R1X = VectorShuffle.iota(FloatVector.SPECIES_512, 1, 1, true);

    private Lanes() {
    }

    /**
     * {@code sum} of {@code v}'s lanes, pairwise: for 8 lanes
     * {@code ((v0+v4)+(v2+v6)) + ((v1+v5)+(v3+v7))}. Species of 4, 8 or 16 lanes.
     *
     * @throws IllegalArgumentException for another lane count
     */
    public static float sum(FloatVector v) {
        FloatVector s;
        switch (v.length()) {
            case 8 -> {
                s = v.add(v.rearrange(R4W));
                s = s.add(s.rearrange(R2W));
                s = s.add(s.rearrange(R1W));
            }
            case 16 -> {
                s = v.add(v.rearrange(R8X));
                s = s.add(s.rearrange(R4X));
                s = s.add(s.rearrange(R2X));
                s = s.add(s.rearrange(R1X));
            }
            case 4 -> {
                s = v.add(v.rearrange(R2));
                s = s.add(s.rearrange(R1));
            }
            default -> throw new IllegalArgumentException("lane sums of 4, 8 or 16 lanes, got " + v.length());
        }
        return s.lane(0);
    }
    /**
     * {@link #sum} of the {@code n} lanes stored at {@code lanes[off..off+n)} (by
     * {@code intoArray}), in scalar code: the same pairs added in the same order, so the same bits.
     * For kernels where C2 runs out of nodes before it inlines every {@link #sum}: a vector passed
     * to a call that is not inlined is boxed (an array and an object per call).
     *
     * @param n 4, 8 or 16
     * @throws IllegalArgumentException for another lane count
     */
    public static float sum(float[] lanes, int off, int n) {
        return switch (n) {
            case 16 -> sum8(lanes[off] + lanes[off + 8], lanes[off + 1] + lanes[off + 9], lanes[off + 2] + lanes[off + 10],
                    lanes[off + 3] + lanes[off + 11], lanes[off + 4] + lanes[off + 12], lanes[off + 5] + lanes[off + 13],
                    lanes[off + 6] + lanes[off + 14], lanes[off + 7] + lanes[off + 15]);
            case 8 -> sum8(lanes[off], lanes[off + 1], lanes[off + 2], lanes[off + 3], lanes[off + 4], lanes[off + 5],
                    lanes[off + 6], lanes[off + 7]);
            case 4 -> sum4(lanes[off], lanes[off + 1], lanes[off + 2], lanes[off + 3]);
            default -> throw new IllegalArgumentException("lane sums of 4, 8 or 16 lanes, got " + n);
        };
    }

    /** Lane 0 of the 8-lane tree: lanes i and i+4, then i and i+2, then 0 and 1. */
    private static float sum8(float a0, float a1, float a2, float a3, float a4, float a5, float a6, float a7) {
        return sum4(a0 + a4, a1 + a5, a2 + a6, a3 + a7);
    }

    /** Lane 0 of the 4-lane tree: lanes i and i+2, then 0 and 1. */
    private static float sum4(float a0, float a1, float a2, float a3) {
        return (a0 + a2) + (a1 + a3);
    }
}
