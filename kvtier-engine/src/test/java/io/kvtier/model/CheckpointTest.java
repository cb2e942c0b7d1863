package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointTest {

    private static final ModelConfig TINY = new ModelConfig(16, 40, 2, 4, 2, 32, 8, true);

    @TempDir
    Path tmp;

    @Test
    void loadsStories260KWithItsHeader() {
        try (Checkpoint c = Checkpoint.load(SharedFiles.stories260K())) {
            assertThat(c.config()).isEqualTo(new ModelConfig(64, 172, 5, 8, 4, 512, 512, true));
            assertThat(c.config().headDim()).isEqualTo(8);
            assertThat(c.config().kvDim()).isEqualTo(32);
            assertThat(c.classifier()).isSameAs(c.tokenEmbedding());
            assertThat(c.tokenEmbedding().data().byteSize()).isEqualTo(512L * 64 * 4);
            assertThat(c.matrix(Model.Matrix.K, 4).data().byteSize()).isEqualTo(32L * 64 * 4);
            assertThat(c.matrix(Model.Matrix.DOWN, 0).data().byteSize()).isEqualTo(64L * 172 * 4);
            assertThat(c.modelId()).hasSize(64).matches("[0-9a-f]+").isEqualTo(c.modelId());
            // Header (28) + parameters + the two legacy RoPE tables equals the file size.
            assertThat(28 + 4 * (c.config().parameterCount() + 512L * 8)).isEqualTo(fileSize(SharedFiles.stories260K()));
        }
    }

    @Test
    void writerOutputLoadsBackWithTheSameShapeAndValues() {
        Path file = tmp.resolve("tiny.bin");
        ModelConfig separate = new ModelConfig(16, 40, 2, 4, 2, 32, 8, false);
        CheckpointWriter.writeRandom(file, separate, 7);
        try (Checkpoint c = Checkpoint.load(file)) {
            assertThat(c.config()).isEqualTo(separate);
            assertThat(c.classifier()).isNotSameAs(c.tokenEmbedding());
            assertThat(c.norm(Model.Norm.FFN, 1).get(ScalarKernels.F32, 4)).isEqualTo(1.0f);
            assertThat(c.outputNorm().get(ScalarKernels.F32, 60)).isEqualTo(1.0f);
            float w = c.matrix(Model.Matrix.Q, 1).data().get(ScalarKernels.F32, 0);
            assertThat(Math.abs(w)).isLessThan(0.2f).isNotZero();
        }
        Path again = tmp.resolve("again.bin");
        CheckpointWriter.writeRandom(again, separate, 7);
        try (Checkpoint a = Checkpoint.load(file); Checkpoint b = Checkpoint.load(again)) {
            assertThat(a.modelId()).isEqualTo(b.modelId());
        }
    }

    @Test
    void missingFileIsReportedWithItsName() {
        Path file = tmp.resolve("nope.bin");
        assertRefused(file, "not found");
    }

    @Test
    void fileShorterThanHeaderIsRejected() throws IOException {
        Path file = Files.write(tmp.resolve("short.bin"), new byte[10]);
        assertRefused(file, "10 bytes, shorter than the 28-byte");
    }

    @Test
    void truncatedFileNamesTheTensorWhereItEnds() throws IOException {
        Path file = tmp.resolve("cut.bin");
        CheckpointWriter.writeRandom(file, TINY, 1);
        long full = Files.size(file);
        CheckpointLayout.Tensor w1 = CheckpointLayout.of(TINY).tensor("w1");
        truncate(file, w1.offsetOf(1) + 8);
        assertRefused(file, "header says 2 layers", "ends inside tensor w1 of layer 1",
                String.format("expected %,d bytes, found %,d", full, w1.offsetOf(1) + 8));
    }

    @Test
    void trailingBytesAreRejected() throws IOException {
        Path file = tmp.resolve("long.bin");
        CheckpointWriter.writeRandom(file, TINY, 1);
        Files.write(file, new byte[12], java.nio.file.StandardOpenOption.APPEND);
        assertRefused(file, "12 bytes more");
    }

    @Test
    void foreignFileOfRandomBytesIsRejected() throws IOException {
        byte[] junk = new byte[4096];
        long seed = 42;
        new Random(seed).nextBytes(junk);
        Path file = Files.write(tmp.resolve("random.dat"), junk);
        assertThatThrownBy(() -> Checkpoint.load(file))
                .as("seed %d", seed)
                .isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("random.dat").hasMessageContaining("not plausible");
    }

    @Test
    void headsThatDoNotDivideDimAreRejected() throws IOException {
        Path file = writeHeader("heads.bin", 64, 172, 5, 7, 7, 512, 512);
        assertRefused(file, "n_heads 7 does not divide dim 64");
    }

    @Test
    void kvHeadsThatDoNotDivideHeadsAreRejected() throws IOException {
        Path file = writeHeader("kv.bin", 64, 172, 5, 8, 3, 512, 512);
        assertRefused(file, "n_kv_heads 3 does not divide n_heads 8");
    }

    @Test
    void nonPositiveDimensionIsRejected() throws IOException {
        Path file = writeHeader("zero.bin", 64, 172, 0, 8, 4, 512, 512);
        assertRefused(file, "n_layers = 0 is not plausible");
    }

    @Test
    void closeInvalidatesTheMapping() {
        Checkpoint c = Checkpoint.load(SharedFiles.stories260K());
        var emb = c.tokenEmbedding().data();
        c.close();
        c.close();
        assertThatThrownBy(() -> emb.get(ValueLayout.JAVA_FLOAT, 0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void parameterCountOfTheStories15MShape() {
        ModelConfig c = new ModelConfig(288, 768, 6, 6, 6, 32000, 256, true);
        assertThat(c.parameterCount()).isEqualTo(15_191_712L);
        assertThat(c.kvLayout(16).bytesPerBlock()).isEqualTo(6L * 2 * 16 * 288 * 4);
    }

    private Path writeHeader(String name, int... header) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(header.length * 4 + 4000).order(ByteOrder.LITTLE_ENDIAN);
        for (int h : header) b.putInt(h);
        return Files.write(tmp.resolve(name), b.array());
    }

    /** Loading {@code file} fails with one message naming the file and saying each of {@code said}. */
    private static void assertRefused(Path file, String... said) {
        assertThatThrownBy(() -> Checkpoint.load(file))
                .isInstanceOf(ModelFormatException.class)
                .hasMessageContaining(file.getFileName().toString())
                .satisfies(e -> assertThat(e.getMessage()).contains(said));
    }

    private static void truncate(Path file, long size) throws IOException {
        try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(size);
        }
    }

    private static long fileSize(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
