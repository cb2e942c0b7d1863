package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A llama2.c checkpoint's digest (its KV namespace's model identity) is hashed once per file version, as a GGUF file's. */
class CheckpointDigestTest {

    @TempDir
    Path tmp;

    @Test
    void theWholeFilesDigestIsCachedByPathSizeAndModificationTime() throws IOException {
        Path copy = tmp.resolve("m.bin");
        Files.copy(ReferenceRecords.model(), copy);
        String expected = Sha256.of(Files.readAllBytes(copy));
        Path dir = tmp.resolve("digests");

        DigestCache one = new DigestCache(dir);
        try (Model m = Models.load(copy, one)) {
            assertThat(m.modelId()).isEqualTo(expected);
        }
        assertThat(one.computed()).isEqualTo(1);

        DigestCache two = new DigestCache(dir);
        try (Model m = Models.load(copy, two)) {
            assertThat(m.modelId()).isEqualTo(expected);
        }
        assertThat(two.computed()).as("a second load reads the cache").isZero();

        Files.setLastModifiedTime(copy, FileTime.fromMillis(12345));
        DigestCache three = new DigestCache(dir);
        try (Model m = Models.load(copy, three)) {
            assertThat(m.modelId()).isEqualTo(expected);
        }
        assertThat(three.computed()).as("a new mtime is hashed again").isEqualTo(1);
    }

    /** trial33: KVTIER_CACHE_DIR naming a file gave no word that nothing is remembered. */
    @Test
    void aCacheUnderAFileSaysWhyNothingIsRemembered() throws IOException {
        Path file = Files.writeString(tmp.resolve("afile"), "in the way");
        DigestCache cache = new DigestCache(file.resolve("digests"));
        try (Model m = Models.load(ReferenceRecords.model(), cache)) {
            assertThat(m.modelId()).hasSize(64);
        }
        assertThat(cache.computed()).isEqualTo(1);
        assertThat(cache.unwritable()).startsWith(file.resolve("digests") + " (").endsWith(")");
        DigestCache fine = new DigestCache(tmp.resolve("digests"));
        try (Model m = Models.load(ReferenceRecords.model(), fine)) {
            assertThat(m.modelId()).hasSize(64);
        }
        assertThat(fine.unwritable()).isNull();
    }

    @Test
    void noneHashesAtEveryLoad() {
        DigestCache none = DigestCache.none();
        try (Model a = Checkpoint.load(ReferenceRecords.model(), none); Model b = Checkpoint.load(ReferenceRecords.model(), none)) {
            assertThat(a.modelId()).isEqualTo(b.modelId()).hasSize(64);
        }
        assertThat(none.computed()).isEqualTo(2);
    }
}
