package io.kvtier.model;

/**
 * Rotary position embedding as llama2.c {@code run.c}: within each head, the adjacent pair
 * {@code (2i, 2i+1)} is rotated by the angle {@code pos * 10000^(-2i/headDim)}. The cos/sin
 * values are tabulated once per position, computed in float as run.c does ({@code powf},
 * {@code cosf}, {@code sinf}) so that results match the reference bit for bit as far as
 * possible.
 */
final class Rope {

    private final int headDim;
    private final int half;
    /** [seqLen][headDim/2] */
    private final float[] cos;
    private final float[] sin;

    Rope(int headDim, int seqLen) {
        this.headDim = headDim;
        this.half = headDim / 2;
        this.cos = new float[seqLen * half];
        this.sin = new float[seqLen * half];
        for (int i = 0; i < half; i++) {
            float freq = 1.0f / (float) Math.pow(10000.0f, (2 * i) / (float) headDim);
            for (int pos = 0; pos < seqLen; pos++) {
                float val = pos * freq;
                cos[pos * half + i] = (float) Math.cos(val);
                sin[pos * half + i] = (float) Math.sin(val);
            }
        }
    }

    /** Rotates {@code heads} consecutive heads of {@code vec} starting at {@code off}, for position {@code pos}. */
    void rotate(float[] vec, int off, int heads, int pos) {
        int t = pos * half;
        for (int h = 0; h < heads; h++) {
            int base = off + h * headDim;
            for (int i = 0; i < half; i++) {
                float fcr = cos[t + i];
                float fci = sin[t + i];
                float v0 = vec[base + 2 * i];
                float v1 = vec[base + 2 * i + 1];
                vec[base + 2 * i] = v0 * fcr - v1 * fci;
                vec[base + 2 * i + 1] = v0 * fci + v1 * fcr;
            }
        }
    }
}
