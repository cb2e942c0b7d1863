package io.kvtier.model;

import io.kvtier.model.tensor.Lanes;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The elementwise kernels of {@link VectorKernels} over float arrays: {@code rmsnorm},
 * {@code softmax}, {@code silu}, {@code swiglu} and {@code add}, one pass or three over a row,
 * with masked tails (their loads are from arrays, where a masked load costs little; the weights
 * of {@code rmsnorm} are its one segment). {@link VectorKernels} calls them, or {@link ScalarKernels}'
 * loops for the kernels with an exp when batch-invariant. Written by {@link VectorKernels}' rules
 * for the JIT: no vector crosses a method boundary, and a vector carried from trip to trip is an
 * argument, never the receiver.
 */
final class VectorElementwise {

    private static final VectorSpecies<Float> S = VectorKernels.S;
    private static final int L = S.length();
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    private VectorElementwise() {
    }

    static void rmsnorm(float[] out, int outOff, float[] x, int xOff, MemorySegment weight, int n, float eps) {
        FloatVector ss = FloatVector.zero(S);
        int i = 0;
        for (; i + L <= n; i += L) {
            FloatVector v = FloatVector.fromArray(S, x, xOff + i);
            ss = v.fma(v, ss);
        }
        if (i < n) {
            FloatVector v = FloatVector.fromArray(S, x, xOff + i, S.indexInRange(i, n));
            ss = v.fma(v, ss);
        }
        float scale = 1f / (float) Math.sqrt(Lanes.sum(ss) / n + eps);
        i = 0;
        for (; i + L <= n; i += L) {
            FloatVector.fromMemorySegment(S, weight, (long) i * Float.BYTES, LE).mul(FloatVector.fromArray(S, x, xOff + i).mul(scale))
                    .intoArray(out, outOff + i);
        }
        if (i < n) {
            VectorMask<Float> m = S.indexInRange(i, n);
            FloatVector.fromMemorySegment(S, weight, (long) i * Float.BYTES, LE, m).mul(FloatVector.fromArray(S, x, xOff + i, m).mul(scale))
                    .intoArray(out, outOff + i, m);
        }
    }

    static void softmax(float[] x, int off, int n) {
        FloatVector mv = FloatVector.broadcast(S, Float.NEGATIVE_INFINITY);
        int i = 0;
        for (; i + L <= n; i += L) {
            // The fresh load is the receiver, never the loop's accumulator: C2 parses the loop with
            // the accumulator typed FloatVector, so a call on it is virtual unless profiled; in a
            // 15M bench run max stayed a virtual call and ran boxed (softmax allocated 609 MB of
            // boxed vectors, ~10% of the CPU samples). max is symmetric, bit for bit.
            mv = FloatVector.fromArray(S, x, off + i).max(mv);
        }
        float max = mv.reduceLanes(VectorOperators.MAX);
        for (; i < n; i++) {
            max = Math.max(max, x[off + i]);
        }
        FloatVector sv = FloatVector.zero(S);
        i = 0;
        for (; i + L <= n; i += L) {
            FloatVector e = FloatVector.fromArray(S, x, off + i).sub(max).lanewise(VectorOperators.EXP);
            e.intoArray(x, off + i);
            sv = e.add(sv);   // the fresh vector the receiver, as above (addition is commutative, bit for bit)
        }
        float sum = Lanes.sum(sv);
        for (; i < n; i++) {
            x[off + i] = (float) Math.exp(x[off + i] - max);
            sum += x[off + i];
        }
        float inv = 1f / sum;
        i = 0;
        for (; i + L <= n; i += L) {
            FloatVector.fromArray(S, x, off + i).mul(inv).intoArray(x, off + i);
        }
        for (; i < n; i++) {
            x[off + i] *= inv;
        }
    }

    static void silu(float[] x, int off, int n) {
        int i = 0;
        for (; i + L <= n; i += L) {
            FloatVector v = FloatVector.fromArray(S, x, off + i);
            v.div(v.neg().lanewise(VectorOperators.EXP).add(1f)).intoArray(x, off + i);   // v * sigmoid(v)
        }
        if (i < n) {
            VectorMask<Float> m = S.indexInRange(i, n);
            FloatVector v = FloatVector.fromArray(S, x, off + i, m);
            v.div(v.neg().lanewise(VectorOperators.EXP).add(1f)).intoArray(x, off + i, m);
        }
    }

    static void swiglu(float[] gate, int gOff, float[] up, int uOff, int n) {
        int i = 0;
        for (; i + L <= n; i += L) {
            FloatVector g = FloatVector.fromArray(S, gate, gOff + i);
            g.div(g.neg().lanewise(VectorOperators.EXP).add(1f)).mul(FloatVector.fromArray(S, up, uOff + i))
                    .intoArray(gate, gOff + i);
        }
        if (i < n) {
            VectorMask<Float> m = S.indexInRange(i, n);
            FloatVector g = FloatVector.fromArray(S, gate, gOff + i, m);
            g.div(g.neg().lanewise(VectorOperators.EXP).add(1f)).mul(FloatVector.fromArray(S, up, uOff + i, m))
                    .intoArray(gate, gOff + i, m);
        }
    }

    static void add(float[] y, int yOff, float[] x, int xOff, int n) {
        int i = 0;
        for (; i + L <= n; i += L) {
            FloatVector.fromArray(S, y, yOff + i).add(FloatVector.fromArray(S, x, xOff + i)).intoArray(y, yOff + i);
        }
        for (; i < n; i++) {
            y[yOff + i] += x[xOff + i];
        }
    }
}
