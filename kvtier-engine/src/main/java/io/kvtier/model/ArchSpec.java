package io.kvtier.model;

import java.util.Arrays;
import java.util.Objects;

/**
 * What one architecture family does differently in the shared forward pass of
 * {@link Transformer}: data, not code. Families (as llama.cpp computes them):
 * <ul>
 *   <li>{@code llama} (llama2.c checkpoints, Llama 2/3.x, SmolLM, Mistral): {@link RopeStyle#NORM},
 *       optional per-frequency divisors ({@code rope_freqs}, Llama 3 scaling), no biases, no q/k norms.</li>
 *   <li>{@code qwen2}: {@link RopeStyle#NEOX}, biases on the q, k and v projections.</li>
 *   <li>{@code qwen3}: {@link RopeStyle#NEOX}, an RMS norm over each query and key head (before RoPE).</li>
 * </ul>
 *
 * @param architecture    the family name ({@code general.architecture} in GGUF)
 * @param rope            which pairs of a head are rotated together
 * @param ropeTheta       base of the rotary frequencies ({@code theta_i = base^(-2i/ropeDim)})
 * @param ropeDim         leading floats of each head that are rotated (even, at most the head width)
 * @param ropeFreqFactors divisors of the {@code ropeDim/2} frequencies, or null for none
 * @param normEps         epsilon of every RMS norm
 * @param qkvBias         whether the q, k and v projections add a bias
 * @param qkNorm          whether each query and key head is RMS-normed with its own weight before RoPE
 */
public record ArchSpec(String architecture, RopeStyle rope, float ropeTheta, int ropeDim, float[] ropeFreqFactors,
                       float normEps, boolean qkvBias, boolean qkNorm) {

    /** Which elements of a head form the rotated pairs. */
    public enum RopeStyle {
        /** Adjacent pairs {@code (2i, 2i+1)}: llama2.c and llama.cpp's LLAMA_ROPE_TYPE_NORM. */
        NORM,
        /** Halves {@code (i, i + ropeDim/2)}: GPT-NeoX, llama.cpp's LLAMA_ROPE_TYPE_NEOX (Qwen). */
        NEOX
    }

    public ArchSpec {
        Objects.requireNonNull(architecture, "architecture");
        Objects.requireNonNull(rope, "rope");
        if (ropeDim <= 0 || ropeDim % 2 != 0) {
            throw new IllegalArgumentException("rope dimension " + ropeDim + " must be even and positive");
        }
        if (ropeFreqFactors != null && ropeFreqFactors.length != ropeDim / 2) {
            throw new IllegalArgumentException(ropeFreqFactors.length + " rope frequency factors for "
                    + ropeDim / 2 + " frequencies");
        }
        if (!(ropeTheta > 0) || !(normEps > 0)) {
            throw new IllegalArgumentException("rope base " + ropeTheta + " and norm epsilon " + normEps
                    + " must be positive");
        }
        ropeFreqFactors = ropeFreqFactors == null ? null : ropeFreqFactors.clone();
    }

    /** llama2.c's {@code run.c}: NORM RoPE with base 10000 over the whole head, eps 1e-5. */
    public static ArchSpec llama2c(ModelConfig c) {
        return new ArchSpec("llama", RopeStyle.NORM, 10000f, c.headDim(), null, 1e-5f, false, false);
    }

    @Override
    public float[] ropeFreqFactors() {
        return ropeFreqFactors == null ? null : ropeFreqFactors.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ArchSpec s && architecture.equals(s.architecture) && rope == s.rope
                && Float.compare(ropeTheta, s.ropeTheta) == 0 && ropeDim == s.ropeDim
                && Arrays.equals(ropeFreqFactors, s.ropeFreqFactors) && Float.compare(normEps, s.normEps) == 0
                && qkvBias == s.qkvBias && qkNorm == s.qkNorm;
    }

    @Override
    public int hashCode() {
        return Objects.hash(architecture, rope, ropeTheta, ropeDim, Arrays.hashCode(ropeFreqFactors), normEps,
                qkvBias, qkNorm);
    }

    @Override
    public String toString() {
        return "ArchSpec[" + architecture + ", rope " + rope + " base " + ropeTheta + " dim " + ropeDim
                + (ropeFreqFactors == null ? "" : " factors " + Arrays.toString(ropeFreqFactors))
                + ", eps " + normEps + (qkvBias ? ", qkv bias" : "") + (qkNorm ? ", q/k norm" : "") + "]";
    }
}
