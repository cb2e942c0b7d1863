package io.kvtier.tier.disk;

import static io.kvtier.tier.disk.Chunks.NS;
import static io.kvtier.tier.disk.Chunks.header;
import static io.kvtier.tier.disk.Chunks.key;
import static io.kvtier.tier.disk.Chunks.payload;
import static io.kvtier.tier.disk.Chunks.write;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 14 item 8: the namespace directory's owner is decided by an OS lock on {@code .lock},
 * never by the file's existence; a store that cannot own says why in one line. The other
 * process is a real child JVM ({@link LockHolderMain}): POSIX locks belong to processes.
 */
class DirectoryLockTest {

    @TempDir
    Path root;

    private Process holder() throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        return new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), LockHolderMain.class.getName(),
                root.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    private static String role(Process child) throws IOException {
        return new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)).readLine();
    }

    private static void stop(Process child) throws Exception {
        child.getOutputStream().close();
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aStoreThatFindsTheLockHeldReadsOnlyAndSaysWhoHoldsItInOneLine() throws Exception {
        Process child = holder();
        try {
            assertThat(role(child)).isEqualTo("OWNER");
            try (DiskStore store = DiskStore.open(root, NS, DiskFsync.NONE)) {
                assertThat(store.role()).isEqualTo(DiskStore.Role.READER);
                assertThat(store.readOnlyReason()).contains("is in use by process " + child.pid())
                        .contains("only reads").doesNotContain("\n");
            }
        } finally {
            child.destroyForcibly();
        }
    }

    @Test
    void deletingTheLockFileOfARunningOwnerNeverMakesTwoOwners() throws Exception {
        try (DiskStore first = DiskStore.open(root, NS, DiskFsync.NONE); Arena arena = Arena.ofConfined()) {
            assertThat(first.role()).isEqualTo(DiskStore.Role.OWNER);
            Files.delete(first.layout().lockFile());
            Process child = holder(); // finds no lock file: makes one and locks it
            try {
                assertThat(role(child)).isEqualTo("OWNER");
                MemorySegment p = payload(arena, 100, 2);
                assertThat(first.write(key(2), header(NS, 2, p), p).ok()).as("the first store lost the directory").isFalse();
                assertThat(first.delete(key(1))).isFalse();
                assertThat(first.layout().fileOf(key(1))).as("the child's chunk").exists();
                assertThat(first.role()).isEqualTo(DiskStore.Role.READER);
                assertThat(first.readOnlyReason()).contains("process " + child.pid());
                stop(child);
                assertThat(first.tryBecomeOwner()).isTrue();
                write(first, 2, p);
            } finally {
                child.destroyForcibly();
            }
        }
    }

    @Test
    void anOwnerWhoseLockFileWasDeletedLocksItAgainBeforeItsNextWrite() throws Exception {
        try (DiskStore first = DiskStore.open(root, NS, DiskFsync.NONE); Arena arena = Arena.ofConfined()) {
            Files.delete(first.layout().lockFile());
            MemorySegment p = payload(arena, 100, 2);
            write(first, 2, p); // notices, makes a new lock file and locks it
            assertThat(first.layout().lockFile()).exists();
            Process child = holder();
            try {
                assertThat(role(child)).isEqualTo("READER");
                stop(child);
            } finally {
                child.destroyForcibly();
            }
            assertThat(first.role()).isEqualTo(DiskStore.Role.OWNER);
        }
    }

    @Test
    void aLockFileThatCannotBeCreatedGivesAReaderAndOneLine() throws IOException {
        // As root, chmod does not stop writes: a directory where the lock file goes cannot be opened for writing.
        try (DiskStore probe = DiskStore.open(root, Chunks.OTHER_NS, DiskFsync.NONE)) {
            Path lock = new DiskLayout(root.toRealPath(), NS).lockFile();
            Files.createDirectories(lock);
            assertThat(probe.role()).isEqualTo(DiskStore.Role.OWNER);
        }
        try (DiskStore store = DiskStore.open(root, NS, DiskFsync.NONE)) {
            assertThat(store.role()).isEqualTo(DiskStore.Role.READER);
            assertThat(store.readOnlyReason()).isEqualTo("disk cache " + store.layout().namespaceDir() + ": cannot write its lock "
                    + "file .lock (Is a directory), so the disk tier stores nothing there (it holds no chunks to read)");
        }
    }

    /**
     * A full disk: the lock file is made (an empty file takes no block) but its pid cannot be written, the
     * IOException a 64 KiB tmpfs gave. The line said "this process only reads it", as if another process
     * owned a directory just made and empty; it says the tier cannot write there and why. The lock is
     * let go: it stayed held, so the next process found the directory "in use" by one that stores nothing.
     */
    @Test
    void aLockFileThatCannotBeWrittenOnAFullDiskSaysSoAndLetsTheLockGo() throws IOException {
        DiskLayout layout = new DiskLayout(root.toRealPath(), NS);
        Files.createDirectories(layout.namespaceDir());
        DirectoryLock.PidWrite full = (ch, text) -> {
            throw new IOException("No space left on device");
        };
        DirectoryLock lock = new DirectoryLock(layout, full);
        assertThat(lock.tryAcquire()).isFalse();
        assertThat(lock.failure()).isEqualTo("disk cache " + layout.namespaceDir() + ": cannot write its lock file .lock "
                + "(No space left on device), so the disk tier stores nothing there (it holds no chunks to read)");
        Files.createDirectories(layout.shardDir(7));
        assertThat(lock.tryAcquire()).isFalse();
        assertThat(lock.failure()).as("a directory with chunks").isEqualTo("disk cache " + layout.namespaceDir()
                + ": cannot write its lock file .lock (No space left on device), so the disk tier stores nothing there; it reads "
                + "the chunks already in it");
        try (DiskStore store = DiskStore.open(root, NS, DiskFsync.NONE)) {
            assertThat(store.role()).as("the failed lock let go of the file").isEqualTo(DiskStore.Role.OWNER);
        }
    }
}
