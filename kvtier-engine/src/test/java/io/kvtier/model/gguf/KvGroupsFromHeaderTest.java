package io.kvtier.model.gguf;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.model.Models;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A model's KV groups from its file's header alone ({@link Models#kvGroupCountFromHeader}), so a
 * command can refuse what the groups rule out before loading many GB: the gemma3 fixture has two
 * (full and window 16), the llama fixtures one; the header suffices (the file cut after it still
 * says two), and what cannot be read says 0 (unknown: the load reports the fault).
 */
class KvGroupsFromHeaderTest {

    @TempDir
    Path dir;

    private static final Path FOLDER = LlamaCppReference.folder();

    @Test
    void gemma3HasTwoGroupsAndLlamaOneFromTheHeaderAlone() throws IOException {
        Path gemma = FOLDER.resolve("gemma3-spm515-f32.gguf");
        assertThat(Models.kvGroupCountFromHeader(gemma)).isEqualTo(2);
        assertThat(Models.kvGroupCountFromHeader(FOLDER.resolve("llama-spm512-q8_0.gguf"))).isEqualTo(1);
        assertThat(Models.kvGroupCountFromHeader(FOLDER.getParent().resolve("stories260K.bin"))).as("llama2.c").isEqualTo(1);

        byte[] all = Files.readAllBytes(gemma);
        long dataStart;
        try (GgufFile f = GgufFile.open(gemma)) {
            dataStart = f.dataOffset();
        }
        Path headerOnly = dir.resolve("header-only.gguf");
        Files.write(headerOnly, java.util.Arrays.copyOf(all, (int) dataStart));
        assertThat(Models.kvGroupCountFromHeader(headerOnly)).as("no tensor data needed").isEqualTo(2);

        Path cut = dir.resolve("cut.gguf");
        Files.write(cut, java.util.Arrays.copyOf(all, 64));
        assertThat(Models.kvGroupCountFromHeader(cut)).as("metadata cut short: unknown").isZero();
        assertThat(Models.kvGroupCountFromHeader(dir.resolve("none.gguf"))).as("no file: not GGUF, one group").isEqualTo(1);
    }
}
