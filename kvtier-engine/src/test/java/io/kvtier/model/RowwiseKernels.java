package io.kvtier.model;

import java.lang.foreign.MemorySegment;

/**
 * The vector kernels with the batched product along weight rows only ({@link VectorKernels#matmulRowwise}
 * for every batch, no packing): the kernels before {@link PackedMatmul}, for comparisons with it.
 */
final class RowwiseKernels implements Kernels {

    private final VectorKernels inner = VectorKernels.INSTANCE;

    @Override
    public String name() {
        return "rowwise-" + inner.name();
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        return inner.dot(a, aOff, b, bOff, n);
    }

    @Override
    public float dot(MemorySegment a, long aByteOff, float[] b, int bOff, int n) {
        return inner.dot(a, aByteOff, b, bOff, n);
    }

    @Override
    public void axpy(float alpha, MemorySegment x, long xByteOff, float[] y, int yOff, int n) {
        inner.axpy(alpha, x, xByteOff, y, yOff, n);
    }

    @Override
    public void scores(MemorySegment k, long kByteOff, long strideBytes, int count, float[] q, int qOff, int n,
                       float scale, float[] scores, int sOff) {
        inner.scores(k, kByteOff, strideBytes, count, q, qOff, n, scale, scores, sOff);
    }

    @Override
    public void weightedSum(MemorySegment v, long vByteOff, long strideBytes, int count, float[] w, int wOff,
                            float[] y, int yOff, int n) {
        inner.weightedSum(v, vByteOff, strideBytes, count, w, wOff, y, yOff, n);
    }

    @Override
    public void matvec(MemorySegment w, int in, float[] x, int xOff, float[] y, int yOff, int rowFrom, int rowTo) {
        inner.matvec(w, in, x, xOff, y, yOff, rowFrom, rowTo);
    }

    @Override
    public void matmul(MemorySegment w, int in, int out, float[] x, int n, float[] y, int rowFrom, int rowTo) {
        if (n == 1) {
            inner.matvec(w, in, x, 0, y, 0, rowFrom, rowTo);
        } else {
            inner.matmulRowwise(w, in, out, x, n, y, rowFrom, rowTo);
        }
    }

    @Override
    public void rmsnorm(float[] out, int outOff, float[] x, int xOff, MemorySegment weight, int n, float eps) {
        inner.rmsnorm(out, outOff, x, xOff, weight, n, eps);
    }

    @Override
    public void softmax(float[] x, int off, int n) {
        inner.softmax(x, off, n);
    }

    @Override
    public void silu(float[] x, int off, int n) {
        inner.silu(x, off, n);
    }

    @Override
    public void swiglu(float[] gate, int gOff, float[] up, int uOff, int n) {
        inner.swiglu(gate, gOff, up, uOff, n);
    }

    @Override
    public void add(float[] y, int yOff, float[] x, int xOff, int n) {
        inner.add(y, yOff, x, xOff, n);
    }
}
