package io.kvtier.model;

/**
 * Rotary position embedding of one family ({@link ArchSpec}): in each head, pair {@code i}
 * ({@code i < ropeDim/2}) is rotated by the angle {@code pos * theta_i},
 * {@code theta_i = base^(-2i/ropeDim) / factor_i}. The pair is {@code (2i, 2i+1)} for
 * {@link ArchSpec.RopeStyle#NORM} and {@code (i, i + ropeDim/2)} for
 * {@link ArchSpec.RopeStyle#NEOX}; floats beyond {@code ropeDim} are left alone.
 *
 * <p>Computed in float as llama2.c's {@code run.c} does ({@code powf}, float angle, {@code cosf},
 * {@code sinf}) so that llama2.c checkpoints match it bit for bit as far as possible; the angles
 * of a position are computed once per step and token (for all layers), not tabulated per position
 * (a table for a 128k-position context would take tens of MB).
 */
final class Rope {

    private final int headDim;
    private final int half;
    private final boolean neox;
    /** theta_i, [ropeDim/2]. */
    private final float[] freq;

    Rope(ArchSpec spec, int headDim) {
        this(spec, headDim, spec.ropeTheta());
    }

    /** The rotation of {@code spec} with base {@code theta} instead of its own (Gemma's local layers). */
    Rope(ArchSpec spec, int headDim, float theta) {
        if (spec.ropeDim() > headDim) {
            throw new IllegalArgumentException("rope dimension " + spec.ropeDim() + " exceeds the head size " + headDim);
        }
        this.headDim = headDim;
        this.half = spec.ropeDim() / 2;
        this.neox = spec.rope() == ArchSpec.RopeStyle.NEOX;
        this.freq = new float[half];
        float[] factors = spec.ropeFreqFactors();
        for (int i = 0; i < half; i++) {
            float f = 1.0f / (float) Math.pow(theta, (2 * i) / (float) spec.ropeDim());
            freq[i] = factors == null ? f : f / factors[i];
        }
    }

    /** Fills {@code cos[off..off+ropeDim/2)}, {@code sin[...]} with the rotation of position {@code pos}. */
    void angles(int pos, float[] cos, float[] sin, int off) {
        for (int i = 0; i < half; i++) {
            float val = pos * freq[i];
            cos[off + i] = (float) Math.cos(val);
            sin[off + i] = (float) Math.sin(val);
        }
    }

    /** Floats needed by {@link #angles}'s arrays. */
    int pairs() {
        return half;
    }

    /** Rotates {@code heads} consecutive heads of {@code vec} starting at {@code off} by the angles at {@code csOff} of {@code cos}, {@code sin}. */
    void rotate(float[] vec, int off, int heads, float[] cos, float[] sin, int csOff) {
        int stride = neox ? 1 : 2;
        int partner = neox ? half : 1;
        for (int h = 0; h < heads; h++) {
            int base = off + h * headDim;
            for (int i = 0; i < half; i++) {
                int a = base + stride * i;
                float fcr = cos[csOff + i];
                float fci = sin[csOff + i];
                float v0 = vec[a];
                float v1 = vec[a + partner];
                vec[a] = v0 * fcr - v1 * fci;
                vec[a + partner] = v0 * fci + v1 * fcr;
            }
        }
    }
}
