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
 *   <li>{@code gemma3}: {@link RopeStyle#NEOX}, q/k norms, and a {@link Gemma} part: the embedding
 *       scaled by {@code sqrt(dim)}, a GELU(tanh)-gated feed-forward layer, RMS norms after
 *       attention and after the feed-forward layer, and interleaved sliding-window ("local")
 *       layers with their own RoPE base.</li>
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
 * @param gemma           the Gemma-family differences, or {@link Gemma#NONE} for the Llama family
 */
public record ArchSpec(String architecture, RopeStyle rope, float ropeTheta, int ropeDim, float[] ropeFreqFactors,
                       float normEps, boolean qkvBias, boolean qkNorm, Gemma gemma) {

    /**
     * What a Gemma (2/3) block does beyond the Llama one, as llama.cpp's {@code gemma3} graph
     * computes it.
     *
     * @param embedScale        factor of the input embedding ({@code sqrt(dim)} for Gemma, 1 for none)
     * @param geluFfn           the feed-forward gate is GELU(tanh) instead of SiLU
     * @param postNorms         the attention output and the feed-forward output are RMS-normed
     *                          ({@code post_attention_norm}, {@code post_ffw_norm}) before their residual add
     * @param finalLogitSoftcap {@code c} of {@code logits = c * tanh(logits / c)}, 0 for none
     * @param slidingWindow     positions a sliding-window layer sees: the query at p sees keys
     *                          {@code p - slidingWindow + 1 .. p}; 0 when no layer slides
     * @param slidingLayers     per layer, whether it is a sliding-window ("local") layer; empty for none
     * @param localRopeTheta    RoPE base of the sliding-window layers (the global ones use {@code ropeTheta})
     */
    public record Gemma(float embedScale, boolean geluFfn, boolean postNorms, float finalLogitSoftcap,
                        int slidingWindow, boolean[] slidingLayers, float localRopeTheta) {

        /** The Llama family: none of it. */
        public static final Gemma NONE = new Gemma(1f, false, false, 0f, 0, new boolean[0], 0f);

        public Gemma {
            Objects.requireNonNull(slidingLayers, "slidingLayers");
            boolean anySliding = false;
            for (boolean b : slidingLayers) anySliding |= b;
            if (slidingWindow < 0 || (anySliding && slidingWindow == 0)) {
                throw new IllegalArgumentException("sliding window " + slidingWindow + " must be positive when a layer slides");
            }
            if (anySliding && !(localRopeTheta > 0)) {
                throw new IllegalArgumentException("local RoPE base " + localRopeTheta + " must be positive");
            }
            if (!(embedScale > 0) || finalLogitSoftcap < 0) {
                throw new IllegalArgumentException("embedding scale " + embedScale + " must be positive and softcap "
                        + finalLogitSoftcap + " not negative");
            }
            slidingLayers = slidingLayers.clone();
        }

        @Override
        public boolean[] slidingLayers() {
            return slidingLayers.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Gemma g && Float.compare(embedScale, g.embedScale) == 0 && geluFfn == g.geluFfn
                    && postNorms == g.postNorms && Float.compare(finalLogitSoftcap, g.finalLogitSoftcap) == 0
                    && slidingWindow == g.slidingWindow && Arrays.equals(slidingLayers, g.slidingLayers)
                    && Float.compare(localRopeTheta, g.localRopeTheta) == 0;
        }

        @Override
        public int hashCode() {
            return Objects.hash(embedScale, geluFfn, postNorms, finalLogitSoftcap, slidingWindow,
                    Arrays.hashCode(slidingLayers), localRopeTheta);
        }

        @Override
        public String toString() {
            if (equals(NONE)) {
                return "";
            }
            StringBuilder s = new StringBuilder(", embed x" + embedScale);
            if (geluFfn) s.append(", gelu ffn");
            if (postNorms) s.append(", post norms");
            if (finalLogitSoftcap > 0) s.append(", logit softcap ").append(finalLogitSoftcap);
            if (slidingWindow > 0) {
                StringBuilder pattern = new StringBuilder();
                for (boolean b : slidingLayers) pattern.append(b ? 'L' : 'G');
                s.append(", window ").append(slidingWindow).append(" layers ").append(pattern)
                        .append(" local base ").append(localRopeTheta);
            }
            return s.toString();
        }
    }

    /** A Llama-family spec (no {@link Gemma} part). */
    public ArchSpec(String architecture, RopeStyle rope, float ropeTheta, int ropeDim, float[] ropeFreqFactors,
                    float normEps, boolean qkvBias, boolean qkNorm) {
        this(architecture, rope, ropeTheta, ropeDim, ropeFreqFactors, normEps, qkvBias, qkNorm, Gemma.NONE);
    }

    /**
     * The sliding window of {@code layer}: the number of positions ending at the query's that it
     * attends to, or 0 for full attention.
     */
    public int window(int layer) {
        boolean[] sl = gemma.slidingLayers;
        return layer < sl.length && sl[layer] ? gemma.slidingWindow : 0;
    }

    /** The RoPE base of {@code layer}: the local base for a sliding-window layer, else {@link #ropeTheta}. */
    public float ropeTheta(int layer) {
        return window(layer) > 0 ? gemma.localRopeTheta : ropeTheta;
    }

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
        Objects.requireNonNull(gemma, "gemma (Gemma.NONE for none)");
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
                && qkvBias == s.qkvBias && qkNorm == s.qkNorm && gemma.equals(s.gemma);
    }

    @Override
    public int hashCode() {
        return Objects.hash(architecture, rope, ropeTheta, ropeDim, Arrays.hashCode(ropeFreqFactors), normEps,
                qkvBias, qkNorm, gemma);
    }

    @Override
    public String toString() {
        return "ArchSpec[" + architecture + ", rope " + rope + " base " + ropeTheta + " dim " + ropeDim
                + (ropeFreqFactors == null ? "" : " factors " + Arrays.toString(ropeFreqFactors))
                + ", eps " + normEps + (qkvBias ? ", qkv bias" : "") + (qkNorm ? ", q/k norm" : "") + gemma + "]";
    }
}
