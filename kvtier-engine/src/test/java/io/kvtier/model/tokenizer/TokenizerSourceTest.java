package io.kvtier.model.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.model.gguf.GgufFile;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Llama 3 and Qwen2 vocabularies built here from {@code tokenizer-src/} (not taken from a
 * GGUF) pass llama.cpp's llama-bpe, qwen2 and deepseek-r1-qwen vectors, all cases.
 */
class TokenizerSourceTest {

    @TempDir
    Path dir;

    private static TokenizerVectors vectors(String name) {
        return TokenizerVectors.read(TokenizerVectorsTest.shared().resolve("models/gguf/vocab"), name);
    }

    @Test
    void llama3FromSourcePassesLlamaBpeVectors() throws IOException {
        try (GgufFile f = GgufFile.open(SourceVocabularies.llama3(dir))) {
            GgufTokenizer tok = GgufTokenizer.of(f);
            assertThat(tok.vocabSize()).isEqualTo(128_256);
            assertThat(tok.vocabulary().text(128_009)).isEqualTo("<|eot_id|>");
            assertThat(vectors("llama-bpe").failures(tok)).isEmpty();
            assertThat(tok.encode("Hello", true, false)).containsExactly(128_000, 9906);
            assertThat(tok.stopTokenIds()).contains(128_001, 128_008, 128_009);
        }
    }

    @Test
    void qwen2FromSourcePassesQwen2Vectors() throws IOException {
        try (GgufFile f = GgufFile.open(SourceVocabularies.qwen2(dir))) {
            GgufTokenizer tok = GgufTokenizer.of(f);
            assertThat(tok.vocabSize()).isEqualTo(151_646);
            assertThat(vectors("qwen2").failures(tok)).isEmpty();
            assertThat(vectors("deepseek-r1-qwen").failures(tok)).isEmpty();
            assertThat(tok.encode("Hello", true, false)).containsExactly(9707);
            assertThat(tok.stopTokenIds()).containsExactly(151_643, 151_645);
        }
    }
}
