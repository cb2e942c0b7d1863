package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link Checks#secretFile}: the files of {@code --api-key-file} and {@code --remote-password-file}. */
class SecretFileTest {

    @TempDir
    Path dir;

    @Test
    void aKeyFileIsReadAsUtf8Text() throws IOException {
        Path f = dir.resolve("key");
        Files.writeString(f, "s\u00e9cret-42\n", StandardCharsets.UTF_8);
        assertThat(Checks.secretFile(f, "--api-key-file")).isEqualTo("s\u00e9cret-42\n");
        Path full = dir.resolve("full");
        Files.write(full, new byte[Checks.SECRET_FILE_MAX_BYTES]);
        assertThat(Checks.secretFile(full, "--api-key-file")).hasSize(Checks.SECRET_FILE_MAX_BYTES);
    }

    /** A gigabyte (sparse, nothing on disk) is refused after 64 KiB: it was read whole, as long and as large as it is. */
    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aLargeFileIsRefusedWithoutReadingIt() throws IOException {
        Path f = PromptSourceTest.sparseZeros(dir.resolve("disk.img"), 1L << 30);
        assertThatThrownBy(() -> Checks.secretFile(f, "--remote-password-file"))
                .isInstanceOf(BadInputException.class)
                .hasMessage("--remote-password-file " + f + ": is larger than 64 KiB; the file should hold the secret alone");
    }

    @Test
    void bytesThatAreNotUtf8AndDirectoriesAreNamed() throws IOException {
        Path f = dir.resolve("bin");
        Files.write(f, new byte[] {'k', (byte) 0xFF, 'y'});
        assertThatThrownBy(() -> Checks.secretFile(f, "--api-key-file"))
                .hasMessage("--api-key-file " + f + ": is not UTF-8 text");
        assertThatThrownBy(() -> Checks.secretFile(dir, "--remote-password-file"))
                .hasMessage("--remote-password-file " + dir + ": is a directory, expected a file");
        Path none = dir.resolve("none");
        assertThatThrownBy(() -> Checks.secretFile(none, "--api-key-file"))
                .hasMessage("--api-key-file " + none + ": no such file");
    }
}
