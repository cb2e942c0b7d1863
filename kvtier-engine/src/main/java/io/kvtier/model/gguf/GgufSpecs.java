package io.kvtier.model.gguf;

import io.kvtier.model.ArchSpec;
import io.kvtier.model.ModelConfig;
import io.kvtier.model.ModelFormatException;
import java.util.List;

/**
 * The supported GGUF architecture families and how their metadata keys become a
 * {@link ModelConfig} and an {@link ArchSpec}, with llama.cpp's defaults for absent keys
 * ({@code rope.freq_base} 10000, {@code head_count_kv} = {@code head_count},
 * {@code key_length} = {@code embedding_length / head_count}, {@code rope.dimension_count} =
 * {@code key_length}).
 */
public final class GgufSpecs {

    /** The families kvtier runs. */
    static final List<String> ARCHITECTURES = List.of("llama", "qwen2", "qwen3", "gemma3");

    /** llama.cpp's Gemma 3 layer pattern when the file has no {@code sliding_window_pattern}: 5 local, 1 global. */
    static final int GEMMA3_PATTERN = 6;
    /** llama.cpp's RoPE base of Gemma 3's local layers when the file has no {@code rope.freq_base_swa}. */
    static final float GEMMA3_LOCAL_ROPE_BASE = 10000f;

    private GgufSpecs() {
    }

    static ModelConfig config(String file, String arch, GgufMetadata md, GgufTensor embedding, boolean tied) {
        if (!ARCHITECTURES.contains(arch)) {
            throw new ModelFormatException(file + ": architecture '" + arch + "' is not supported (supported: "
                    + String.join(", ", ARCHITECTURES) + ")");
        }
        int dim = md.getInt(arch + ".embedding_length");
        int hidden = md.getInt(arch + ".feed_forward_length");
        int layers = md.getInt(arch + ".block_count");
        int heads = md.getInt(arch + ".attention.head_count");
        int kvHeads = md.getInt(arch + ".attention.head_count_kv", heads);
        int seqLen = md.getInt(arch + ".context_length");
        int headDim = md.getInt(arch + ".attention.key_length", heads > 0 ? dim / heads : 0);
        int valueDim = md.getInt(arch + ".attention.value_length", headDim);
        if (valueDim != headDim) {
            throw new ModelFormatException(file + ": attention.value_length " + valueDim + " differs from key_length "
                    + headDim + "; kvtier's KV layout needs them equal");
        }
        long vocab = embedding.dims().length == 2 ? embedding.dim(1) : -1;
        if (embedding.dim(0) != dim || vocab <= 0 || vocab > Integer.MAX_VALUE) {
            throw new ModelFormatException(file + ": tensor token_embd.weight has ne "
                    + java.util.Arrays.toString(embedding.dims()) + ", expected [" + dim + ", n_vocab]");
        }
        String problem = ModelConfig.shapeProblem(dim, hidden, layers, heads, kvHeads, (int) vocab, seqLen, headDim);
        if (problem != null) {
            throw new ModelFormatException(file + ": " + problem);
        }
        return new ModelConfig(dim, hidden, layers, heads, kvHeads, (int) vocab, seqLen, tied, headDim);
    }

    static ArchSpec spec(String file, String arch, GgufMetadata md, ModelConfig c, float[] freqFactors) {
        float theta = md.getFloat(arch + ".rope.freq_base", 10000f);
        int ropeDim = md.getInt(arch + ".rope.dimension_count", c.headDim());
        float eps = md.getFloat(arch + ".attention.layer_norm_rms_epsilon");
        if (ropeDim <= 0 || ropeDim > c.headDim() || ropeDim % 2 != 0) {
            throw new ModelFormatException(file + ": rope.dimension_count " + ropeDim + " must be even and at most the head size "
                    + c.headDim());
        }
        if (freqFactors != null && freqFactors.length != ropeDim / 2) {
            throw new ModelFormatException(file + ": rope_freqs.weight holds " + freqFactors.length + " factors, expected "
                    + ropeDim / 2);
        }
        if (!(theta > 0) || !(eps > 0)) {
            throw new ModelFormatException(file + ": rope.freq_base " + theta + " and layer_norm_rms_epsilon " + eps
                    + " must be positive");
        }
        if (md.has(arch + ".attn_logit_softcapping")) {
            throw new ModelFormatException(file + ": attn_logit_softcapping is set; kvtier does not soft-cap attention scores");
        }
        return switch (arch) {
            case "llama" -> new ArchSpec(arch, ArchSpec.RopeStyle.NORM, theta, ropeDim, freqFactors, eps, false, false);
            case "qwen2" -> new ArchSpec(arch, ArchSpec.RopeStyle.NEOX, theta, ropeDim, freqFactors, eps, true, false);
            case "qwen3" -> new ArchSpec(arch, ArchSpec.RopeStyle.NEOX, theta, ropeDim, freqFactors, eps, false, true);
            case "gemma3" -> new ArchSpec(arch, ArchSpec.RopeStyle.NEOX, theta, ropeDim, freqFactors, eps, false, true,
                    gemma3(file, md, c));
            default -> throw new IllegalStateException("unreachable: " + arch);
        };
    }

    /**
     * Gemma 3 as llama.cpp builds it: embedding x sqrt(dim), GELU(tanh) gate, post-attention and
     * post-FFN norms, {@code final_logit_softcapping} when set, and sliding-window layers: the
     * window from {@code attention.sliding_window} (required), the layer pattern from
     * {@code attention.sliding_window_pattern} (a period n: layer l slides unless
     * {@code l % n == n - 1}; or one boolean per layer; default period 6), the local RoPE base from
     * {@code rope.freq_base_swa} (default 10000).
     */
    private static ArchSpec.Gemma gemma3(String file, GgufMetadata md, ModelConfig c) {
        int window = md.getInt("gemma3.attention.sliding_window");
        if (window <= 0) {
            throw new ModelFormatException(file + ": gemma3.attention.sliding_window " + window + " must be positive");
        }
        boolean[] sliding = gemma3Sliding(file, md, c.layers());
        float localBase = md.getFloat("gemma3.rope.freq_base_swa", GEMMA3_LOCAL_ROPE_BASE);
        float softcap = md.getFloat("gemma3.final_logit_softcapping", 0f);
        if (!(localBase > 0) || !(softcap >= 0)) {
            throw new ModelFormatException(file + ": rope.freq_base_swa " + localBase + " must be positive and "
                    + "final_logit_softcapping " + softcap + " not negative");
        }
        return new ArchSpec.Gemma((float) Math.sqrt(c.dim()), true, true, softcap, window, sliding, localBase);
    }

    /** Which of {@code layers} Gemma 3 layers slide ({@link #gemma3}'s pattern rules). */
    private static boolean[] gemma3Sliding(String file, GgufMetadata md, int layers) {
        boolean[] sliding = new boolean[layers];
        String patternKey = "gemma3.attention.sliding_window_pattern";
        GgufValue pattern = md.has(patternKey) ? md.get(patternKey) : null;
        if (pattern != null && pattern.value() instanceof boolean[] perLayer) {
            if (perLayer.length != layers) {
                throw new ModelFormatException(file + ": " + patternKey + " has " + perLayer.length + " entries for "
                        + layers + " layers");
            }
            System.arraycopy(perLayer, 0, sliding, 0, perLayer.length);
        } else {
            int period = pattern == null ? GEMMA3_PATTERN : md.getInt(patternKey);
            if (period <= 0) {
                throw new ModelFormatException(file + ": " + patternKey + " " + period + " must be positive");
            }
            for (int l = 0; l < sliding.length; l++) {
                sliding[l] = l % period < period - 1;
            }
        }
        return sliding;
    }

    /**
     * The number of KV groups (attention kinds) a model with metadata {@code md} has: 2 for a Gemma 3
     * file with sliding-window and global layers, else 1; the header alone tells (no tensor is read).
     *
     * @throws ModelFormatException when the keys it needs are missing or wrong
     */
    public static int kvGroupCount(String file, GgufMetadata md) {
        if (!"gemma3".equals(md.getString("general.architecture", ""))) {
            return 1;
        }
        boolean[] sliding = gemma3Sliding(file, md, md.getInt("gemma3.block_count"));
        int slidingLayers = 0;
        for (boolean b : sliding) {
            slidingLayers += b ? 1 : 0;
        }
        return slidingLayers == 0 || slidingLayers == sliding.length ? 1 : 2;
    }
}
