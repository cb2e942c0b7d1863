package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvtier.model.gguf.GgufFile;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new user's trial (thirtieth session): a FIFO given as the model hung every command for ever
 * (its open blocks until a writer comes); a device was called "empty"; a large file that is no
 * model was read whole into memory (2 GB of zeros: 10 s, 2.3 GB resident) before its first bytes
 * were checked, and at 50 GB refused as "not enough memory". Each is now one line from the
 * first bytes, or without opening the file.
 */
class NonRegularModelFileTest {

    @TempDir
    Path dir;

    @Test
    void aFifoIsRefusedWithoutBeingOpened() throws Exception {
        Path fifo = dir.resolve("model.gguf");
        Process p;
        try {
            p = new ProcessBuilder("mkfifo", fifo.toString()).start();
        } catch (IOException e) {
            assumeTrue(false, "no mkfifo here");
            return;
        }
        assumeTrue(p.waitFor() == 0 && Files.exists(fifo), "mkfifo failed");
        // Guards against the hang (a blocked open never returns); the refusal itself takes microseconds.
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            assertThat(GgufFile.isGguf(fifo)).isFalse();
            assertThat(Models.kvGroupCountFromHeader(fifo)).isEqualTo(1);
            assertThat(Checkpoint.vocabSizeFromHeader(fifo)).isZero();
            assertThatThrownBy(() -> Models.load(fifo)).isInstanceOf(ModelFormatException.class)
                    .hasMessage("model file " + fifo + ": is not a regular file (a pipe, device or socket), expected a GGUF file"
                            + " or a llama2.c checkpoint");
            assertThatThrownBy(() -> GgufFile.open(fifo)).hasMessageContaining("is not a regular file");
            assertThatThrownBy(() -> Tokenizer.load(fifo, 512)).hasMessageContaining("is not a regular file");
        });
    }

    @Test
    void aDeviceIsNotCalledEmpty() {
        Path zero = Path.of("/dev/zero");
        assumeTrue(Files.exists(zero), "no /dev/zero");
        assertThatThrownBy(() -> Models.load(zero)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("/dev/zero: is not a regular file");
    }

    @Test
    void aLargeFileOfZerosIsRefusedByItsHeaderNotByMemory() throws IOException {
        Path big = dir.resolve("zeros.bin");
        try (RandomAccessFile f = new RandomAccessFile(big.toFile(), "rw")) {
            f.setLength(50L << 30);   // sparse: no disk used; reading it whole would need 50 GB of memory
        }
        assertThatThrownBy(() -> Models.load(big)).isInstanceOf(ModelFormatException.class)
                .hasMessageStartingWith("model file " + big + ": ")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("memory"));
    }

    @Test
    void aGgufMagicFollowedByZerosIsRefusedByItsVersionBeforeTheFileIsRead() throws IOException {
        Path big = dir.resolve("zeros.gguf");
        try (RandomAccessFile f = new RandomAccessFile(big.toFile(), "rw")) {
            f.setLength(50L << 30);
            f.write("GGUF".getBytes(StandardCharsets.US_ASCII));
        }
        assertThatThrownBy(() -> Models.load(big)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("unsupported GGUF version 0 (kvtier reads versions 2 and 3)");
    }
}
