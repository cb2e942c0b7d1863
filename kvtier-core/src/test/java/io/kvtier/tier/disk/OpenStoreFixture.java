package io.kvtier.tier.disk;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The setup of the tests on one owning {@link DiskStore}: a fresh store of namespace
 * {@link Chunks#NS} (no fsync) in a temporary {@link #root} per test, and a shared arena for
 * payloads; both closed after the test.
 */
abstract class OpenStoreFixture {

    @TempDir
    Path root;

    final Arena arena = Arena.ofShared();
    DiskStore store;

    @BeforeEach
    void open() throws IOException {
        store = DiskStore.open(root, Chunks.NS, DiskFsync.NONE);
    }

    @AfterEach
    void close() {
        store.close();
        arena.close();
    }
}
