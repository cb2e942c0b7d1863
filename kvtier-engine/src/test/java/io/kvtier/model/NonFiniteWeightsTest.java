package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.model.gguf.GgufFile;
import io.kvtier.model.gguf.GgufTensor;
import io.kvtier.model.gguf.GgufWriter;
import io.kvtier.model.tensor.FiniteCheck;
import io.kvtier.model.tensor.TensorType;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A NaN or infinite weight is refused at load in one line naming the file, the tensor and the
 * first bad value (before, such a model generated token 0 for ever); for GGUF the check runs with
 * the digest, and a cached digest of the current format means a checked file.
 */
class NonFiniteWeightsTest {

    private static final ModelConfig SHAPE = new ModelConfig(64, 96, 2, 4, 2, 64, 32, true);
    private static final short HALF_NAN = 0x7e00;
    private static final short HALF_INF = 0x7c00;

    @TempDir
    Path tmp;

    @Test
    void aNaNInALlama2cCheckpointNamesTheTensorLayerAndElement() throws IOException {
        Path bin = tmp.resolve("m.bin");
        CheckpointWriter.writeRandom(bin, SHAPE, 3);
        CheckpointLayout.Tensor w1 = CheckpointLayout.of(SHAPE).tensor("w1");
        poke(bin, w1.offsetOf(1) + 5L * Float.BYTES, floatBytes(Float.NaN));
        assertThatThrownBy(() -> Checkpoint.load(bin)).isInstanceOf(ModelFormatException.class)
                .hasMessage("model file " + bin + ": tensor w1 of layer 1 holds NaN (first at element 5)"
                        + "; the weights are damaged (every output would be NaN)");
        poke(bin, w1.offsetOf(1) + 5L * Float.BYTES, floatBytes(0.5f));
        CheckpointLayout.Tensor norm = CheckpointLayout.of(SHAPE).tensor("rms_final_weight");
        poke(bin, norm.offsetOf(0) + 63L * Float.BYTES, floatBytes(Float.NEGATIVE_INFINITY));
        assertThatThrownBy(() -> Checkpoint.load(bin)).hasMessage("model file " + bin + ": tensor rms_final_weight holds an"
                + " infinite value (first at element 63); the weights are damaged (every output would be NaN)");
    }

    /** One bad value in a layer's ffn_up (a scale for quantized types) of each type make-model writes. */
    @ParameterizedTest
    @EnumSource(value = TensorType.class, names = {"F32", "F16", "BF16", "Q8_0", "Q4_0"})
    void aBadValueInAGgufTensorIsNamedAndNothingIsCached(TensorType type) throws IOException {
        Path gguf = tmp.resolve("m.gguf");
        GgufWriter.writeRandom(gguf, SHAPE, type, 4);
        long at = tensorOffset(gguf, "blk.1.ffn_up.weight");
        int block = 3;  // elements 96..127 (a block of 32 values, or values 96.. for float types)
        byte[] bad = switch (type) {
            case F32 -> floatBytes(Float.POSITIVE_INFINITY);
            case F16 -> shortBytes(HALF_NAN);
            case BF16 -> shortBytes((short) 0x7fc0);
            default -> shortBytes(HALF_NAN);
        };
        long where = type.blockValues() == 1 ? at + 96L * type.blockBytes() : at + (long) block * type.blockBytes();
        poke(gguf, where, bad);
        DigestCache digests = new DigestCache(tmp.resolve("digests"));
        String found = switch (type) {
            case F32 -> "an infinite value (first at element 96)";
            case F16, BF16 -> "NaN (first at element 96)";
            default -> "a NaN scale (block 3, elements 96..127)";
        };
        assertThatThrownBy(() -> Models.load(gguf, digests)).isInstanceOf(ModelFormatException.class)
                .hasMessage("GGUF file " + gguf + ": tensor blk.1.ffn_up.weight holds " + found
                        + "; the weights are damaged (every output would be NaN)");
        assertThat(digests.computed()).as("a refused file is not remembered").isZero();
        assertThatThrownBy(() -> Models.load(gguf, digests)).hasMessageContaining("blk.1.ffn_up.weight");
    }

    @Test
    void aCachedDigestMeansACheckedFileAndAnEntryOfTheOldFormatIsCheckedAgain() throws IOException {
        Path gguf = tmp.resolve("m.gguf");
        GgufWriter.writeRandom(gguf, SHAPE, TensorType.Q8_0, 4);
        DigestCache digests = new DigestCache(tmp.resolve("digests"));
        String id;
        try (Model m = Models.load(gguf, digests)) {
            id = m.modelId();
        }
        assertThat(digests.computed()).isEqualTo(1);
        try (Model m = Models.load(gguf, digests)) {
            assertThat(m.modelId()).isEqualTo(id);
        }
        assertThat(digests.computed()).as("the second load reads the entry: no check, no hash").isEqualTo(1);

        // An entry written before the check existed (no format line) for a damaged file of the same mtime.
        long mtime = Files.getLastModifiedTime(gguf).toMillis();
        poke(gguf, tensorOffset(gguf, "output_norm.weight"), floatBytes(Float.NaN));
        Files.setLastModifiedTime(gguf, java.nio.file.attribute.FileTime.fromMillis(mtime));
        Path real = gguf.toRealPath();
        String digest = id.substring("gguf:".length(), "gguf:".length() + 64);
        Files.writeString(tmp.resolve("digests").resolve(Sha256.of(real.toString().getBytes(StandardCharsets.UTF_8)) + ".digest"),
                real + "\n" + Files.size(real) + "\n" + Files.getLastModifiedTime(real).to(java.util.concurrent.TimeUnit.NANOSECONDS)
                        + "\n" + digest + "\n");
        assertThatThrownBy(() -> Models.load(gguf, digests)).hasMessage("GGUF file " + gguf
                + ": tensor output_norm.weight holds NaN (first at element 0); the weights are damaged (every output would be NaN)");
    }

    /** Q4_K's d and dmin and Q6_K's d (its last two bytes), in hand-built blocks; the quants never matter. */
    @Test
    void kQuantScalesAreCheckedWhereGgmlPutsThem() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment k4 = arena.allocate(TensorType.Q4_K.blockBytes() * 3L);
            k4.fill((byte) 0x7c);  // quants and 6-bit scales full of 0x7c: not floats, never read as such
            for (int b = 0; b < 3; b++) {
                k4.set(LE_SHORT, b * 144L, (short) 0x3c00);
                k4.set(LE_SHORT, b * 144L + 2, (short) 0x3c00);
            }
            assertThat(FiniteCheck.firstNonFinite(TensorType.Q4_K, k4, 768)).isNull();
            k4.set(LE_SHORT, 2 * 144L + 2, HALF_INF);
            assertThat(FiniteCheck.firstNonFinite(TensorType.Q4_K, k4, 768))
                    .isEqualTo(new FiniteCheck.Found(512, "an infinite scale (block 2, elements 512..767)"));
            k4.set(LE_SHORT, 144L, HALF_NAN);
            assertThat(FiniteCheck.firstNonFinite(TensorType.Q4_K, k4, 768).description())
                    .isEqualTo("a NaN scale (block 1, elements 256..511)");

            MemorySegment k6 = arena.allocate(TensorType.Q6_K.blockBytes() * 2L);
            k6.fill((byte) 0xff);
            k6.set(LE_SHORT, 208, (short) 0x3c00);
            k6.set(LE_SHORT, 210 + 208, (short) 0x3c00);
            assertThat(FiniteCheck.firstNonFinite(TensorType.Q6_K, k6, 512)).isNull();
            k6.set(LE_SHORT, 210 + 208, HALF_NAN);
            assertThat(FiniteCheck.firstNonFinite(TensorType.Q6_K, k6, 512).description())
                    .isEqualTo("a NaN scale (block 1, elements 256..511)");
        }
    }

    /** The largest finite values and subnormals pass; the first bad value is found past a piece's end. */
    @Test
    void edgeValuesPassAndTheFirstBadValueIsFoundAnywhere() {
        try (Arena arena = Arena.ofConfined()) {
            long n = 3L * 4096 + 17;
            MemorySegment f = arena.allocate(n * 4);
            for (long i = 0; i < n; i++) {
                f.set(LE_FLOAT, i * 4, i % 3 == 0 ? Float.MAX_VALUE : i % 3 == 1 ? -Float.MIN_VALUE : -0f);
            }
            assertThat(FiniteCheck.firstNonFinite(TensorType.F32, f, n)).isNull();
            f.set(LE_FLOAT, (n - 1) * 4, Float.NaN);
            f.set(LE_FLOAT, (n - 5) * 4, Float.NEGATIVE_INFINITY);
            assertThat(FiniteCheck.firstNonFinite(TensorType.F32, f, n))
                    .isEqualTo(new FiniteCheck.Found(n - 5, "an infinite value (first at element " + (n - 5) + ")"));
            assertThat(FiniteCheck.firstNonFinite(TensorType.F32, f, n - 5)).as("only the values asked for are read").isNull();

            MemorySegment h = arena.allocate(2 * 4100L);
            h.fill((byte) 0);
            h.set(LE_SHORT, 2, (short) 0x7bff);   // the largest finite half
            h.set(LE_SHORT, 4, (short) 0x0001);   // the smallest subnormal
            assertThat(FiniteCheck.firstNonFinite(TensorType.F16, h, 4100)).isNull();
            h.set(LE_SHORT, 2 * 4099L, (short) 0xfc00);  // -inf
            assertThat(FiniteCheck.firstNonFinite(TensorType.F16, h, 4100).description())
                    .isEqualTo("an infinite value (first at element 4099)");
            assertThat(FiniteCheck.firstNonFinite(TensorType.BF16, h, 4100)).as("0xfc00 is a finite bfloat16 (-2^121)").isNull();
        }
    }

    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat LE_FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    static long tensorOffset(Path gguf, String tensor) {
        try (GgufFile f = GgufFile.open(gguf)) {
            GgufTensor t = f.tensor(tensor);
            return f.dataOffset() + t.offset();
        }
    }

    static void poke(Path file, long offset, byte[] bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(bytes), offset);
        }
    }

    static byte[] floatBytes(float v) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putFloat(v).array();
    }

    private static byte[] shortBytes(short v) {
        return ByteBuffer.allocate(2).order(ByteOrder.LITTLE_ENDIAN).putShort(v).array();
    }
}
