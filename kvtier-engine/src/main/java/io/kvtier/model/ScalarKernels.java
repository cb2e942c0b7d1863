package io.kvtier.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Reference kernels: plain loops in the order llama2.c computes, float accumulation. */
final class ScalarKernels implements Kernels {

    static final ScalarKernels INSTANCE = new ScalarKernels();

    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private ScalarKernels() {
    }

    @Override
    public String name() {
        return "scalar";
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        float s = 0f;
        for (int i = 0; i < n; i++) {
            s += a[aOff + i] * b[bOff + i];
        }
        return s;
    }

    @Override
    public float dot(MemorySegment a, long aByteOff, float[] b, int bOff, int n) {
        float s = 0f;
        for (int i = 0; i < n; i++) {
            s += a.get(F32, aByteOff + (long) i * Float.BYTES) * b[bOff + i];
        }
        return s;
    }

    @Override
    public void axpy(float alpha, MemorySegment x, long xByteOff, float[] y, int yOff, int n) {
        for (int i = 0; i < n; i++) {
            y[yOff + i] += alpha * x.get(F32, xByteOff + (long) i * Float.BYTES);
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
        for (int i = 0; i < count; i++) {
            axpy(w[wOff + i], v, vByteOff + i * strideBytes, y, yOff, n);
        }
    }

    @Override
    public void matvec(MemorySegment w, int in, float[] x, int xOff, float[] y, int yOff, int rowFrom, int rowTo) {
        for (int r = rowFrom; r < rowTo; r++) {
            y[yOff + r] = dot(w, (long) r * in * Float.BYTES, x, xOff, in);
        }
    }

    @Override
    public void matmul(MemorySegment w, int in, int out, float[] x, int n, float[] y, int rowFrom, int rowTo) {
        for (int r = rowFrom; r < rowTo; r++) {
            for (int i = 0; i < n; i++) {
                y[i * out + r] = dot(w, (long) r * in * Float.BYTES, x, i * in, in);
            }
        }
    }

    @Override
    public void rmsnorm(float[] out, int outOff, float[] x, int xOff, MemorySegment weight, int n, float eps) {
        float ss = 0f;
        for (int i = 0; i < n; i++) {
            ss += x[xOff + i] * x[xOff + i];
        }
        float scale = 1f / (float) Math.sqrt(ss / n + eps);
        for (int i = 0; i < n; i++) {
            out[outOff + i] = weight.get(F32, (long) i * Float.BYTES) * (scale * x[xOff + i]);
        }
    }

    @Override
    public void softmax(float[] x, int off, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, x[off + i]);
        }
        float sum = 0f;
        for (int i = 0; i < n; i++) {
            x[off + i] = (float) Math.exp(x[off + i] - max);
            sum += x[off + i];
        }
        for (int i = 0; i < n; i++) {
            x[off + i] /= sum;
        }
    }

    @Override
    public void silu(float[] x, int off, int n) {
        for (int i = 0; i < n; i++) {
            float v = x[off + i];
            x[off + i] = v * (1f / (1f + (float) Math.exp(-v)));
        }
    }

    @Override
    public void swiglu(float[] gate, int gOff, float[] up, int uOff, int n) {
        for (int i = 0; i < n; i++) {
            float v = gate[gOff + i];
            gate[gOff + i] = v * (1f / (1f + (float) Math.exp(-v))) * up[uOff + i];
        }
    }

    @Override
    public void add(float[] y, int yOff, float[] x, int xOff, int n) {
        for (int i = 0; i < n; i++) {
            y[yOff + i] += x[xOff + i];
        }
    }
}
