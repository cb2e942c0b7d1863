package io.kvtier.model.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/** Float32 dot product of a scratch row with an activation row (the batched path of {@link QuantMatmul}). */
final class FloatDot {

    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final int L = S.length();

    private FloatDot() {
    }

    /** {@code sum_k a[k] * x[xOff+k]}, {@code k < n}. */
    static float dot(float[] a, float[] x, int xOff, int n) {
        FloatVector s0 = FloatVector.zero(S), s1 = s0;
        int k = 0;
        for (; k + 2 * L <= n; k += 2 * L) {
            s0 = FloatVector.fromArray(S, a, k).fma(FloatVector.fromArray(S, x, xOff + k), s0);
            s1 = FloatVector.fromArray(S, a, k + L).fma(FloatVector.fromArray(S, x, xOff + k + L), s1);
        }
        for (; k + L <= n; k += L) {
            s0 = FloatVector.fromArray(S, a, k).fma(FloatVector.fromArray(S, x, xOff + k), s0);
        }
        float s = s0.add(s1).reduceLanes(VectorOperators.ADD);
        for (; k < n; k++) {
            s += a[k] * x[xOff + k];
        }
        return s;
    }
}
