package io.kvtier.model.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.model.ArchSpec;
import io.kvtier.model.ModelConfig;
import io.kvtier.model.ModelFormatException;
import java.util.LinkedHashMap;
import org.junit.jupiter.api.Test;

/** How {@code gemma3.*} metadata becomes the local/global layer pattern, and what is refused. */
class Gemma3SpecTest {

    static final ModelConfig SHAPE = new ModelConfig(64, 128, 6, 4, 1, 515, 32768, true, 32);

    private static LinkedHashMap<String, GgufValue> base() {
        LinkedHashMap<String, GgufValue> md = new LinkedHashMap<>();
        md.put("gemma3.attention.layer_norm_rms_epsilon", new GgufValue(GgufValueType.FLOAT32, null, 1e-6f));
        md.put("gemma3.rope.freq_base", new GgufValue(GgufValueType.FLOAT32, null, 1e6f));
        md.put("gemma3.attention.sliding_window", new GgufValue(GgufValueType.UINT32, null, 16L));
        return md;
    }

    private static ArchSpec spec(LinkedHashMap<String, GgufValue> md) {
        return GgufSpecs.spec("f.gguf", "gemma3", new GgufMetadata("f.gguf", md), SHAPE, null);
    }

    private static String pattern(ArchSpec s) {
        StringBuilder b = new StringBuilder();
        for (int l = 0; l < SHAPE.layers(); l++) b.append(s.window(l) > 0 ? 'L' : 'G');
        return b.toString();
    }

    @Test
    void llamaCppDefaultsWithoutTheOptionalKeys() {
        ArchSpec s = spec(base());
        assertThat(pattern(s)).isEqualTo("LLLLLG");
        assertThat(s.window(0)).isEqualTo(16);
        assertThat(s.ropeTheta(0)).isEqualTo(10000f);
        assertThat(s.ropeTheta(5)).isEqualTo(1e6f);
        assertThat(s.gemma().embedScale()).isEqualTo(8f);
        assertThat(s.rope()).isEqualTo(ArchSpec.RopeStyle.NEOX);
        assertThat(s.qkNorm()).isTrue();
        assertThat(s.toString()).contains("window 16 layers LLLLLG local base 10000.0");
    }

    @Test
    void aPeriodOrOneBooleanPerLayerSetsThePattern() {
        LinkedHashMap<String, GgufValue> md = base();
        md.put("gemma3.attention.sliding_window_pattern", new GgufValue(GgufValueType.UINT32, null, 3L));
        md.put("gemma3.rope.freq_base_swa", new GgufValue(GgufValueType.FLOAT32, null, 5000f));
        ArchSpec s = spec(md);
        assertThat(pattern(s)).isEqualTo("LLGLLG");
        assertThat(s.ropeTheta(0)).isEqualTo(5000f);
        md.put("gemma3.attention.sliding_window_pattern", new GgufValue(GgufValueType.ARRAY, GgufValueType.BOOL,
                new boolean[] {true, false, true, false, true, false}));
        assertThat(pattern(spec(md))).isEqualTo("LGLGLG");
        assertThat(spec(md)).as("the pattern is part of the spec, so of the KV namespace").isNotEqualTo(spec(base()));
    }

    @Test
    void whatKvtierCannotComputeIsRefusedInOneLine() {
        LinkedHashMap<String, GgufValue> md = base();
        md.put("gemma3.attn_logit_softcapping", new GgufValue(GgufValueType.FLOAT32, null, 50f));
        assertThatThrownBy(() -> spec(md)).isInstanceOf(ModelFormatException.class)
                .hasMessage("f.gguf: attn_logit_softcapping is set; kvtier does not soft-cap attention scores");
        LinkedHashMap<String, GgufValue> none = base();
        none.remove("gemma3.attention.sliding_window");
        assertThatThrownBy(() -> spec(none)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("gemma3.attention.sliding_window");
        LinkedHashMap<String, GgufValue> bools = base();
        bools.put("gemma3.attention.sliding_window_pattern", new GgufValue(GgufValueType.ARRAY, GgufValueType.BOOL,
                new boolean[] {true, false}));
        assertThatThrownBy(() -> spec(bools)).isInstanceOf(ModelFormatException.class)
                .hasMessage("f.gguf: gemma3.attention.sliding_window_pattern has 2 entries for 6 layers");
    }
}
