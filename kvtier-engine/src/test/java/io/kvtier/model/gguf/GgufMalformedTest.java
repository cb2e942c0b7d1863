package io.kvtier.model.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.model.ModelFormatException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each kind of malformed GGUF gives one line naming the file and the problem. */
class GgufMalformedTest {

    @TempDir
    Path dir;

    /** A small valid file: two metadata entries, two tensors. */
    private static GgufBytes valid() {
        return new GgufBytes()
                .string("general.architecture", "llama")
                .u32("llama.block_count", 2)
                .strings("tokenizer.ggml.tokens", "a", "b")
                .tensor("a.weight", GgmlType.F32, 4, 2)
                .tensor("b.weight", GgmlType.Q8_0, 64, 1);
    }

    private String expectError(GgufBytes g, String fileName) {
        Path p = g.write(dir, fileName);
        return expectError(p);
    }

    private static String expectError(Path p) {
        try (GgufFile ignored = GgufFile.open(p)) {
            throw new AssertionError("opened " + p + " without error");
        } catch (ModelFormatException e) {
            assertThat(e.getMessage()).startsWith("GGUF file " + p + ": ").doesNotContain("\n");
            return e.getMessage().substring(("GGUF file " + p + ": ").length());
        }
    }

    @Test
    void validFileOpens() {
        Path p = valid().write(dir, "ok.gguf");
        try (GgufFile f = GgufFile.open(p)) {
            assertThat(f.tensors()).extracting(GgufTensor::name).containsExactly("a.weight", "b.weight");
            assertThat(f.tensor("b.weight").offset()).isEqualTo(32);
            assertThat(f.tensor("b.weight").byteSize()).isEqualTo(68);
            assertThat(f.metadata().getInt("llama.block_count")).isEqualTo(2);
            assertThat(f.data(f.tensor("b.weight")).byteSize()).isEqualTo(68);
        }
    }

    @Test
    void everyTruncationIsReported() throws IOException {
        byte[] whole = valid().bytes();
        for (int len = 0; len < whole.length; len++) {
            Path p = Files.write(dir.resolve("cut" + len + ".gguf"), Arrays.copyOf(whole, len));
            assertThat(expectError(p)).as("cut at %d of %d", len, whole.length)
                    .contains(len == 0 ? "is empty (0 bytes)" : "truncated");
        }
    }

    @Test
    void truncatedMessagesSayWhere() throws IOException {
        byte[] whole = valid().bytes();
        Path p = Files.write(dir.resolve("t.gguf"), Arrays.copyOf(whole, whole.length - 1));
        assertThat(expectError(p)).isEqualTo("truncated or corrupt: tensor b.weight (Q8_0 [64, 1], 68 bytes at data"
                + " offset 32) ends past the end of the file (data section of 99 bytes)");
        Path q = Files.write(dir.resolve("h.gguf"), Arrays.copyOf(whole, 64));
        assertThat(expectError(q)).isEqualTo("truncated: a string of 5 bytes in the metadata key"
                + " general.architecture does not fit in the 0 bytes left");
    }

    @Test
    void badMagic() {
        assertThat(expectError(valid().magic(0x12345678), "m.gguf"))
                .isEqualTo("bad magic 0x12345678, expected \"GGUF\"; not a GGUF file");
    }

    @Test
    void badVersion() {
        assertThat(expectError(valid().version(1), "v1.gguf")).isEqualTo("unsupported GGUF version 1 (kvtier reads versions 2 and 3)");
        assertThat(expectError(valid().version(4), "v4.gguf")).isEqualTo("unsupported GGUF version 4 (kvtier reads versions 2 and 3)");
    }

    @Test
    void unknownTensorType() {
        GgufBytes g = new GgufBytes().tensorAt("x", 4, 0, 32, 32);
        assertThat(expectError(g, "t4.gguf")).isEqualTo("tensor x has unknown tensor type 4");
        GgufBytes h = new GgufBytes().tensorAt("y", 99, 0, 32, 32);
        assertThat(expectError(h, "t99.gguf")).isEqualTo("tensor y has unknown tensor type 99");
    }

    @Test
    void unknownMetadataType() {
        GgufBytes g = new GgufBytes().kv("weird", 13, o -> o.u32(0));
        assertThat(expectError(g, "k.gguf")).isEqualTo("unknown metadata value type 13 in the metadata key weird");
    }

    @Test
    void tensorOutOfBounds() {
        GgufBytes g = valid().tensorAt("c.weight", GgmlType.F32.id, 1024, 16, 4).dataBytes(100);
        assertThat(expectError(g, "oob.gguf")).isEqualTo("truncated or corrupt: tensor c.weight (F32 [4], 16 bytes at"
                + " data offset 1024) ends past the end of the file (data section of 100 bytes)");
    }

    @Test
    void overlappingTensors() {
        GgufBytes g = new GgufBytes()
                .tensorAt("a", GgmlType.F32.id, 0, 64 * 4, 64)
                .tensorAt("b", GgmlType.F32.id, 32, 4 * 4, 4);
        assertThat(expectError(g, "overlap.gguf")).isEqualTo("tensors a and b overlap (data offsets 0+256 and 32)");
    }

    @Test
    void misalignedTensor() {
        GgufBytes g = new GgufBytes().tensorAt("a", GgmlType.F32.id, 4, 16, 4);
        assertThat(expectError(g, "mis.gguf")).isEqualTo("tensor a has offset 4, not a multiple of the alignment 32");
        GgufBytes h = new GgufBytes().u32("general.alignment", 64).tensorAt("a", GgmlType.F32.id, 32, 16, 4);
        assertThat(expectError(h, "mis64.gguf")).isEqualTo("tensor a has offset 32, not a multiple of the alignment 64");
    }

    @Test
    void badAlignmentKey() {
        GgufBytes g = new GgufBytes().u32("general.alignment", 48);
        assertThat(expectError(g, "a48.gguf")).isEqualTo("general.alignment 48 is not a power of two");
        GgufBytes h = new GgufBytes().string("general.alignment", "32");
        assertThat(expectError(h, "astr.gguf")).isEqualTo("metadata key general.alignment is STRING, expected UINT32");
    }

    @Test
    void rowsNotWholeBlocks() {
        GgufBytes g = new GgufBytes().tensorAt("q", GgmlType.Q4_0.id, 0, 18, 48);
        assertThat(expectError(g, "blk.gguf")).isEqualTo("tensor q has rows of 48 elements, not a whole number of Q4_0 blocks of 32");
    }

    @Test
    void tooManyDims() {
        GgufBytes g = new GgufBytes().tensorAt("x", 0, 0, 4, 1, 1, 1, 1, 1);
        assertThat(expectError(g, "dims.gguf")).isEqualTo("tensor x has 5 dims, expected 1..4");
    }

    @Test
    void duplicates() {
        GgufBytes g = new GgufBytes().u32("k", 1).u32("k", 2);
        assertThat(expectError(g, "dupk.gguf")).isEqualTo("duplicate metadata key k");
        GgufBytes h = new GgufBytes().tensor("t", GgmlType.F32, 4).tensor("t", GgmlType.F32, 4);
        assertThat(expectError(h, "dupt.gguf")).isEqualTo("duplicate tensor name t");
    }

    @Test
    void impossibleCounts() throws IOException {
        byte[] b = valid().bytes();
        b[8] = (byte) 0xFF; // tensor count low byte: 255 tensors cannot fit
        Path p = Files.write(dir.resolve("count.gguf"), b);
        assertThat(expectError(p)).startsWith("tensor count 255 cannot fit in the ");
        GgufBytes arr = new GgufBytes().kv("a", 9, o -> o.u32(5).u64(1L << 40));
        assertThat(expectError(arr, "arr.gguf")).isEqualTo("array element count 1099511627776 cannot fit in the 0"
                + " bytes left in the file (truncated or corrupt metadata key a)");
    }

    @Test
    void missingOrMistypedRequiredKey() {
        try (GgufFile f = GgufFile.open(valid().write(dir, "keys.gguf"))) {
            GgufMetadata m = f.metadata();
            String file = "GGUF file " + dir.resolve("keys.gguf");
            assertThatThrownBy(() -> m.getInt("llama.embedding_length"))
                    .isInstanceOf(ModelFormatException.class)
                    .hasMessage(file + ": missing required metadata key llama.embedding_length");
            assertThatThrownBy(() -> m.getString("llama.block_count"))
                    .hasMessage(file + ": metadata key llama.block_count is UINT32, expected STRING");
            assertThatThrownBy(() -> m.getFloatArray("tokenizer.ggml.tokens"))
                    .hasMessage(file + ": metadata key tokenizer.ggml.tokens is ARRAY of STRING, expected an ARRAY of FLOAT32");
            assertThat(m.getInt("llama.embedding_length", 7)).isEqualTo(7);
        }
    }

    @Test
    void missingFileAndDirectory() {
        Path missing = dir.resolve("nope.gguf");
        assertThat(expectError(missing)).isEqualTo("not found");
        assertThat(expectError(dir)).isEqualTo("is a directory, expected a GGUF file");
    }
}
