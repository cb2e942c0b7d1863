package io.kvtier.model.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import io.kvtier.model.gguf.GgufFile;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every vector of llama.cpp's tokenizer tests ({@code shared/models/gguf/vocab/*.inp/.out}),
 * one case per vector file, all 46 inputs asserted. Vocabularies: llama.cpp's vocab-only GGUFs
 * where they exist; for Llama 3 and Qwen2 (whose vocab GGUFs are too big to ship) the gguf-ref
 * models, whose tokenizer metadata was built from {@code tokenizer-src/} (the same data
 * {@link TokenizerSourceTest} turns into a vocab-only file here).
 */
class TokenizerVectorsTest {

    static Path shared() {
        return ReferenceRecords.shared();
    }

    @ParameterizedTest(name = "{0} on {1}")
    @CsvSource({
        "llama-spm, models/gguf/vocab/ggml-vocab-llama-spm.gguf",
        "phi-3, models/gguf/vocab/ggml-vocab-phi-3.gguf",
        "gpt-2, models/gguf/vocab/ggml-vocab-gpt-2.gguf",
        "starcoder, models/gguf/vocab/ggml-vocab-starcoder.gguf",
        "llama-bpe, models/gguf-ref/llama3-bpe-q8_0.gguf",
        "qwen2, models/gguf-ref/qwen2-bpe-q8_0.gguf",
        "deepseek-r1-qwen, models/gguf-ref/qwen2-bpe-q8_0.gguf",
    })
    void everyVectorPasses(String vectors, String vocabFile) {
        TokenizerVectors v = TokenizerVectors.read(shared().resolve("models/gguf/vocab"), vectors);
        assertThat(v.inputs()).hasSize(46);
        try (GgufFile f = GgufFile.open(shared().resolve(vocabFile))) {
            GgufTokenizer tok = GgufTokenizer.of(f);
            assertThat(v.failures(tok)).as("vectors %s", vectors).isEmpty();
        }
    }

    /** The comparison can fail: GPT-2's vocabulary does not produce StarCoder's ids. */
    @org.junit.jupiter.api.Test
    void aWrongVocabularyFails() {
        TokenizerVectors v = TokenizerVectors.read(shared().resolve("models/gguf/vocab"), "starcoder");
        try (GgufFile f = GgufFile.open(shared().resolve("models/gguf/vocab/ggml-vocab-gpt-2.gguf"))) {
            assertThat(v.failures(GgufTokenizer.of(f)).lines().count()).isGreaterThan(30);
        }
    }
}
