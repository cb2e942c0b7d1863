package io.kvtier.model.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.engine.ReferenceRecords;
import io.kvtier.model.ModelFormatException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading real GGUF files: header, metadata, tensor infos and data, checked against known facts. */
class GgufFileTest {

    static Path gguf(String name) {
        return ReferenceRecords.shared().resolve("models/gguf/" + name);
    }

    @Test
    void stories260KHeaderAndTensors() {
        try (GgufFile f = GgufFile.open(gguf("stories260K.gguf"))) {
            assertThat(f.version()).isEqualTo(3);
            assertThat(f.metadata().keys()).hasSize(19);
            assertThat(f.tensors()).hasSize(48);
            assertThat(f.alignment()).isEqualTo(32);
            assertThat(f.dataOffset()).isEqualTo(14_176);
            GgufMetadata m = f.metadata();
            assertThat(m.getString("general.architecture")).isEqualTo("llama");
            assertThat(m.getInt("llama.embedding_length")).isEqualTo(64);
            assertThat(m.getInt("llama.block_count")).isEqualTo(5);
            assertThat(m.getFloat("llama.attention.layer_norm_rms_epsilon")).isEqualTo(1e-5f);
            assertThat(m.getString("tokenizer.ggml.model")).isEqualTo("llama");
            assertThat(m.getStringArray("tokenizer.ggml.tokens")).hasSize(512).startsWith("<unk>", "<s>", "</s>", "<0x00>");
            assertThat(m.getFloatArray("tokenizer.ggml.scores")).hasSize(512);
            assertThat(m.getIntArray("tokenizer.ggml.token_type")).hasSize(512).startsWith(2, 3, 3, 6);
            assertThat(m.getInt("tokenizer.ggml.bos_token_id")).isEqualTo(1);
            assertThat(m.has("tokenizer.ggml.pre")).isFalse();
            assertThat(m.getBool("tokenizer.ggml.add_bos_token", true)).isTrue();

            GgufTensor emb = f.tensor("token_embd.weight");
            assertThat(emb.type()).isEqualTo(GgmlType.F32);
            assertThat(emb.dims()).containsExactly(64, 512);
            assertThat(emb.byteSize()).isEqualTo(64L * 512 * 4);
            GgufTensor last = f.tensors().stream().max((a, b) -> Long.compare(a.offset(), b.offset())).orElseThrow();
            assertThat(f.dataOffset() + last.offset() + last.byteSize()).isEqualTo(f.segment().byteSize());
            assertThat(f.findTensor("no.such")).isNull();
            assertThatThrownBy(() -> f.tensor("no.such"))
                    .isInstanceOf(ModelFormatException.class)
                    .hasMessage("GGUF file " + gguf("stories260K.gguf") + ": missing required tensor no.such");
        }
    }

    /** The GGUF embedding is byte-identical to the llama2.c checkpoint's (SOURCES.md): the slice is the data. */
    @Test
    void tensorDataIsTheWeights() throws IOException {
        byte[] bin = Files.readAllBytes(ReferenceRecords.model());
        try (GgufFile f = GgufFile.open(gguf("stories260K.gguf"))) {
            MemorySegment emb = f.data(f.tensor("token_embd.weight"));
            byte[] expected = Arrays.copyOfRange(bin, 28, 28 + 64 * 512 * 4);
            assertThat(emb.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(expected);
            assertThat(emb.isReadOnly()).isTrue();
        }
    }

    @Test
    void vocabOnlyFileEndsBeforeThePaddedDataOffset() {
        try (GgufFile f = GgufFile.open(gguf("vocab/ggml-vocab-llama-spm.gguf"))) {
            assertThat(f.tensors()).isEmpty();
            assertThat(f.metadata().keys()).hasSize(22);
            assertThat(f.metadata().getStringArray("tokenizer.ggml.tokens")).hasSize(32_000);
            assertThat(f.dataOffset()).isGreaterThan(f.segment().byteSize());
        }
    }

    @Test
    void f16AndQuantizedTensorSizes() {
        try (GgufFile f = GgufFile.open(gguf("llama-2-tiny-random.gguf"))) {
            assertThat(f.tensors()).hasSize(12);
            assertThat(f.tensors().stream().filter(t -> t.type() == GgmlType.F16)).hasSize(9);
            assertThat(f.tensor("token_embd.weight").dims()).containsExactly(8, 32_000);
            assertThat(f.dataOffset()).isEqualTo(724_416);
        }
        Path q4k = ReferenceRecords.shared().resolve("models/gguf-ref/llama-spm512-q4_k.gguf");
        try (GgufFile f = GgufFile.open(q4k)) {
            GgufTensor q = f.tensor("blk.0.attn_q.weight");
            assertThat(q.type()).isEqualTo(GgmlType.Q4_K);
            assertThat(q.dims()).containsExactly(256, 256);
            assertThat(q.byteSize()).isEqualTo(256L * 144);
            assertThat(q.rowBytes()).isEqualTo(144);
            GgufTensor last = f.tensors().stream().max((a, b) -> Long.compare(a.offset(), b.offset())).orElseThrow();
            assertThat(f.dataOffset() + last.offset() + last.byteSize()).isEqualTo(f.segment().byteSize());
        }
    }

    @Test
    void isGgufLooksAtContentOnly(@TempDir Path dir) throws IOException {
        assertThat(GgufFile.isGguf(gguf("stories260K.gguf"))).isTrue();
        assertThat(GgufFile.isGguf(ReferenceRecords.model())).isFalse();
        assertThat(GgufFile.isGguf(dir.resolve("missing"))).isFalse();
        Path renamed = Files.copy(gguf("stories260K.gguf"), dir.resolve("model.bin"));
        assertThat(GgufFile.isGguf(renamed)).isTrue();
    }

    /**
     * The file is read into the process's memory, not mapped: truncating it in place after it was
     * opened (which under a mapping raises SIGBUS and kills the JVM on the next access) changes
     * nothing the reader sees.
     */
    @Test
    void aFileTruncatedAfterOpeningKeepsItsBytes(@TempDir Path dir) throws IOException {
        Path copy = Files.copy(gguf("stories260K.gguf"), dir.resolve("s.gguf"));
        byte[] expected = Files.readAllBytes(copy);
        try (GgufFile f = GgufFile.open(copy)) {
            try (var ch = java.nio.channels.FileChannel.open(copy, java.nio.file.StandardOpenOption.WRITE)) {
                ch.truncate(100);
            }
            assertThat(Files.size(copy)).isEqualTo(100);
            GgufTensor last = f.tensors().stream().max((a, b) -> Long.compare(a.offset(), b.offset())).orElseThrow();
            byte[] tail = f.data(last).toArray(ValueLayout.JAVA_BYTE);
            long at = f.dataOffset() + last.offset();
            assertThat(tail).isEqualTo(Arrays.copyOfRange(expected, (int) at, (int) (at + last.byteSize())));
            assertThat(f.segment().toArray(ValueLayout.JAVA_BYTE)).isEqualTo(expected);
        }
    }

    @Test
    void anEmptyFileSaysSo(@TempDir Path dir) throws IOException {
        Path empty = Files.createFile(dir.resolve("empty.gguf"));
        assertThatThrownBy(() -> GgufFile.open(empty))
                .isInstanceOf(ModelFormatException.class)
                .hasMessage("GGUF file " + empty + ": is empty (0 bytes), expected a GGUF file");
    }
}
