package io.kvtier.tier.disk;

import static io.kvtier.tier.disk.Chunks.NS;
import static io.kvtier.tier.disk.Chunks.OTHER_NS;
import static io.kvtier.tier.disk.Chunks.header;
import static io.kvtier.tier.disk.Chunks.key;
import static io.kvtier.tier.disk.Chunks.parent;
import static io.kvtier.tier.disk.Chunks.payload;
import static io.kvtier.tier.disk.Chunks.read;
import static io.kvtier.tier.disk.Chunks.tokens;
import static io.kvtier.tier.disk.Chunks.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DiskStoreTest extends OpenStoreFixture {

    private MemorySegment dst(long bytes) {
        return arena.allocate(Math.max(1, bytes), 64).asSlice(0, bytes);
    }

    private static List<Path> filesUnder(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().equals(DiskLayout.LOCK_FILE))
                    .sorted().toList();
        }
    }

    @Test
    void roundTripIsByteExactForEmptySmallAndMultiPiecePayloads() {
        long piece = DiskStore.READ_PIECE;
        long[] sizes = {0, 1, 1000, piece - 1, piece, piece + 1, 2 * piece, 7 * piece + 17, 40 * piece + 3};
        for (int i = 0; i < sizes.length; i++) {
            MemorySegment p = payload(arena, sizes[i], i);
            write(store, i, p);
            MemorySegment back = dst(sizes[i]);
            DiskRead r = read(store, i, back);
            assertThat(r).isEqualTo(new DiskRead.Ok(header(NS, i, p)));
            assertThat(back.mismatch(p)).as("first differing byte of chunk %d", i).isEqualTo(-1L);
        }
    }

    @Test
    void fileHasTheDocumentedPathNameAndByteLayout() throws IOException {
        MemorySegment p = payload(arena, 4096, 7);
        write(store, 7, p);
        String keyHex = key(7).toString();
        Path file = root.toRealPath().resolve(NS.toString()).resolve(keyHex.substring(0, 2)).resolve(keyHex + ".kvc");
        assertThat(store.layout().fileOf(key(7))).isEqualTo(file);
        byte[] bytes = Files.readAllBytes(file);
        long headerBytes = ChunkHeader.encodedSize(16);
        assertThat(bytes.length).isEqualTo(headerBytes + 4096).isEqualTo(DiskCapacity.fileBytes(4096, 16));
        assertThat(new String(bytes, 0, 4, StandardCharsets.US_ASCII)).isEqualTo("KVTC");
        assertThat(ChunkHeader.readFrom(MemorySegment.ofArray(bytes), 0)).isEqualTo(header(NS, 7, p));
        assertThat(Arrays.copyOfRange(bytes, (int) headerBytes, bytes.length)).isEqualTo(p.toArray(ValueLayout.JAVA_BYTE));
        assertThat(filesUnder(root)).containsExactly(file); // no temporary file left
    }

    @Test
    void rewriteReplacesTheFileAtomically() {
        MemorySegment first = payload(arena, 3000, 1);
        MemorySegment second = payload(arena, 3000, 2);
        write(store, 3, first);
        write(store, 3, second);
        MemorySegment back = dst(3000);
        assertThat(read(store, 3, back).ok()).isTrue();
        assertThat(back.mismatch(second)).isEqualTo(-1L);
    }

    @Test
    void everyFsyncPolicyRoundTrips() throws IOException {
        for (DiskFsync f : DiskFsync.values()) {
            try (DiskStore s = DiskStore.open(root.resolve(f.cliName()), NS, f)) {
                MemorySegment p = payload(arena, 10_000, f.ordinal());
                write(s, 1, p);
                MemorySegment back = dst(10_000);
                assertThat(read(s, 1, back).ok()).as(f.cliName()).isTrue();
                assertThat(back.mismatch(p)).isEqualTo(-1L);
            }
        }
        assertThat(DiskFsync.parse("DATA_and-dir")).isEqualTo(DiskFsync.DATA_AND_DIR);
        assertThatThrownBy(() -> DiskFsync.parse("always")).hasMessageContaining("none, data or data-and-dir");
    }

    private Path fileOf(long i) {
        return store.layout().fileOf(key(i));
    }

    private static void flipByte(Path file, long at) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(at);
            int b = f.read();
            f.seek(at);
            f.write(b ^ 0x40);
        }
    }

    @Test
    void flippedPayloadByteIsCorrupt() throws IOException {
        write(store, 1, payload(arena, 5000, 1));
        flipByte(fileOf(1), ChunkHeader.encodedSize(16) + 2500);
        DiskRead r = read(store, 1, dst(5000));
        assertThat(r).isInstanceOf(DiskRead.Corrupt.class);
        assertThat(((DiskRead.Corrupt) r).reason()).contains("payload checksum mismatch").contains(fileOf(1).toString());
    }

    @Test
    void flippedHeaderByteIsCorrupt() throws IOException {
        write(store, 1, payload(arena, 5000, 1));
        flipByte(fileOf(1), 130); // a token id
        assertThat(read(store, 1, dst(5000))).isInstanceOfSatisfying(DiskRead.Corrupt.class,
                c -> assertThat(c.reason()).contains("header checksum mismatch"));
    }

    @Test
    void truncatedFileIsCorrupt() throws IOException {
        write(store, 1, payload(arena, 5000, 1));
        try (RandomAccessFile f = new RandomAccessFile(fileOf(1).toFile(), "rw")) {
            f.setLength(f.length() - 1);
        }
        assertThat(read(store, 1, dst(5000))).isInstanceOfSatisfying(DiskRead.Corrupt.class,
                c -> assertThat(c.reason()).contains("5191 bytes, expected 5192"));
        try (RandomAccessFile f = new RandomAccessFile(fileOf(1).toFile(), "rw")) {
            f.setLength(100); // inside the header
        }
        assertThat(read(store, 1, dst(5000))).isInstanceOfSatisfying(DiskRead.Corrupt.class,
                c -> assertThat(c.reason()).contains("truncated"));
        try (RandomAccessFile f = new RandomAccessFile(fileOf(1).toFile(), "rw")) {
            f.setLength(0);
        }
        assertThat(read(store, 1, dst(5000))).isInstanceOf(DiskRead.Corrupt.class);
    }

    @Test
    void extendedFileIsCorrupt() throws IOException {
        write(store, 1, payload(arena, 5000, 1));
        Files.write(fileOf(1), new byte[] {1, 2, 3}, java.nio.file.StandardOpenOption.APPEND);
        assertThat(read(store, 1, dst(5000))).isInstanceOfSatisfying(DiskRead.Corrupt.class,
                c -> assertThat(c.reason()).contains("5195 bytes, expected 5192"));
    }

    @Test
    void deletedOrNeverWrittenIsMissing() {
        write(store, 1, payload(arena, 5000, 1));
        assertThat(store.delete(key(1))).isTrue();
        assertThat(store.delete(key(1))).isFalse();
        assertThat(read(store, 1, dst(5000))).isEqualTo(new DiskRead.Missing());
        assertThat(read(store, 2, dst(5000))).isEqualTo(new DiskRead.Missing());
    }

    @Test
    void headerOfAnotherNamespaceIsCorrupt() throws IOException {
        try (DiskStore other = DiskStore.open(root, OTHER_NS, DiskFsync.NONE)) {
            write(other, 1, payload(arena, 5000, 1));
            Files.createDirectories(fileOf(1).getParent());
            Files.copy(other.layout().fileOf(key(1)), fileOf(1));
        }
        assertThat(read(store, 1, dst(5000))).isInstanceOfSatisfying(DiskRead.Corrupt.class,
                c -> assertThat(c.reason()).contains("namespace " + OTHER_NS.shortHex()));
    }

    @Test
    void unexpectedParentTokensOrLengthIsCorrupt() {
        MemorySegment p = payload(arena, 5000, 1);
        write(store, 1, p);
        assertThat(store.read(key(1), key(99), tokens(1), dst(5000))).isInstanceOfSatisfying(DiskRead.Corrupt.class,
                c -> assertThat(c.reason()).contains("parent key"));
        assertThat(store.read(key(1), parent(1), tokens(2), dst(5000))).isInstanceOfSatisfying(DiskRead.Corrupt.class,
                c -> assertThat(c.reason()).contains("token ids"));
        assertThat(store.read(key(1), parent(1), tokens(1), dst(4000))).isInstanceOfSatisfying(DiskRead.Corrupt.class,
                c -> assertThat(c.reason()).contains("payload length 5000"));
        // another chunk's file under this key's name: the header names the other key
        write(store, 2, p);
        Path two = fileOf(2);
        try {
            Files.move(two, fileOf(1), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        assertThat(read(store, 1, dst(5000))).isInstanceOfSatisfying(DiskRead.Corrupt.class,
                c -> assertThat(c.reason()).contains("header of key " + key(2).shortHex()));
    }

    /**
     * Making writes fail deterministically as root (chmod does not stop root): put a regular file
     * where the chunk's shard directory must go. Creating the directory then fails with
     * FileAlreadyExistsException / "not a directory", exactly as a read-only or broken directory
     * would, and only the keys of that shard are affected.
     */
    @Test
    void writeFailsWhenTheShardDirectoryCannotBeCreatedAndNothingElseIsAffected() throws IOException {
        Path shard = store.layout().shardDir(DiskLayout.shardOf(key(1)));
        Files.writeString(shard, "in the way");
        MemorySegment p = payload(arena, 5000, 1);
        DiskWrite w = store.write(key(1), header(NS, 1, p), p);
        assertThat(w).isInstanceOfSatisfying(DiskWrite.Failed.class,
                f -> assertThat(f.reason()).contains(key(1).shortHex()).contains(shard.toString()));
        assertThat(Files.readString(shard)).isEqualTo("in the way");
        assertThat(DiskLayout.shardOf(key(2))).isNotEqualTo(DiskLayout.shardOf(key(1)));
        write(store, 2, p); // another shard still works
        assertThat(read(store, 2, dst(5000)).ok()).isTrue();
        assertThat(read(store, 1, dst(5000))).isInstanceOf(DiskRead.Missing.class); // no directory, so no file
        assertThat(filesUnder(root)).containsExactlyInAnyOrder(shard, fileOf(2));
    }

    /**
     * A failure at the very end, after the payload was written: a non-empty directory sits where
     * the file must be published, so the rename fails. The temporary file is removed; nothing
     * visible changes.
     */
    @Test
    void writeFailingAtThePublishingRenameLeavesNoTemporaryFile() throws IOException {
        Path blocker = fileOf(1);
        Files.createDirectories(blocker);
        Files.writeString(blocker.resolve("keep"), "x");
        MemorySegment p = payload(arena, 300_000, 1);
        DiskWrite w = store.write(key(1), header(NS, 1, p), p);
        assertThat(w).isInstanceOfSatisfying(DiskWrite.Failed.class, f -> assertThat(f.reason()).contains(blocker.toString()));
        assertThat(filesUnder(root)).containsExactly(blocker.resolve("keep"));
        assertThat(read(store, 1, dst(300_000))).isInstanceOfSatisfying(DiskRead.Corrupt.class,
                c -> assertThat(c.reason()).contains("not a regular file"));
    }

    /**
     * The first write failure of each cause is one line to the sink (a new user's full disk gave no
     * message at all); more failures of that cause say nothing more, another cause is told once too.
     */
    @Test
    void eachCauseOfAWriteFailureIsToldOnce() throws IOException {
        List<String> lines = new java.util.ArrayList<>();
        store.warnWriteFailures(lines::add);
        MemorySegment p = payload(arena, 300, 1);
        for (int k = 1; k <= 3; k++) {
            Path blocker = fileOf(k);
            Files.createDirectories(blocker);
            Files.writeString(blocker.resolve("keep"), "x");
            assertThat(store.write(key(k), header(NS, k, p), p)).isInstanceOf(DiskWrite.Failed.class);
        }
        assertThat(lines).containsExactly("disk tier " + store.layout().namespaceDir() + ": cannot write chunk files: "
                + "Is a directory (chunks are not stored on disk while it lasts; counted in store_failures)");
        int other = 4;
        while (Files.exists(store.layout().shardDir(DiskLayout.shardOf(key(other))))) {
            other++;
        }
        Path shard = store.layout().shardDir(DiskLayout.shardOf(key(other)));
        Files.writeString(shard, "in the way");
        assertThat(store.write(key(other), header(NS, other, p), p)).isInstanceOf(DiskWrite.Failed.class);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(1)).contains(": cannot write chunk files: " + shard + " is not a directory");
    }

    @Test
    void writeChecksItsArguments() {
        MemorySegment p = payload(arena, 100, 1);
        assertThatThrownBy(() -> store.write(key(2), header(NS, 1, p), p)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("header of key");
        assertThatThrownBy(() -> store.write(key(1), header(OTHER_NS, 1, p), p))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("namespace");
        assertThatThrownBy(() -> store.write(key(1), header(NS, 1, p), p.asSlice(0, 50)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload has 50");
    }

    @Test
    void closedStoreNeitherWritesNorDeletes() {
        MemorySegment p = payload(arena, 100, 1);
        write(store, 1, p);
        store.close();
        assertThat(store.write(key(2), header(NS, 2, p), p)).isInstanceOfSatisfying(DiskWrite.Failed.class,
                f -> assertThat(f.reason()).contains("closed"));
        assertThat(store.delete(key(1))).isFalse();
        assertThat(read(store, 1, dst(100)).ok()).isTrue();
    }

    @Test
    void pathsOutsideTheNamespaceDirectoryAreRefused() throws IOException {
        DiskLayout layout = store.layout();
        Path ns = layout.namespaceDir();
        assertThat(layout.requireInside(ns.resolve("ab/x.kvc"))).isEqualTo(ns.resolve("ab/x.kvc"));
        for (Path p : List.of(ns, ns.resolve(".."), ns.resolve("ab/../../escape"), root, Path.of("/etc/passwd"),
                root.resolve(OTHER_NS.toString()).resolve("ab/x.kvc"), ns.resolveSibling(ns.getFileName() + "x/y"))) {
            assertThatThrownBy(() -> layout.requireInside(p)).as(p.toString())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside");
        }
    }

    @Test
    void aShardDirectoryThatIsASymbolicLinkIsNeverWrittenThrough(@TempDir Path outside) throws IOException {
        Path shard = store.layout().shardDir(DiskLayout.shardOf(key(1)));
        Files.createSymbolicLink(shard, outside);
        MemorySegment p = payload(arena, 100, 1);
        assertThat(store.write(key(1), header(NS, 1, p), p)).isInstanceOfSatisfying(DiskWrite.Failed.class,
                f -> assertThat(f.reason()).contains("symbolic link"));
        try (Stream<Path> s = Files.list(outside)) {
            assertThat(s.toList()).isEmpty();
        }
    }

    @Test
    void aNamespaceDirectoryThatIsASymbolicLinkIsRefusedAtOpen(@TempDir Path outside) throws IOException {
        Path link = root.toRealPath().resolve(OTHER_NS.toString());
        Files.createSymbolicLink(link, outside);
        assertThatThrownBy(() -> DiskStore.open(root, OTHER_NS, DiskFsync.NONE)).isInstanceOf(IOException.class)
                .hasMessageContaining("symbolic link");
    }

    @Test
    void aTemporaryFileIsNeverVisibleAsTheChunk() throws IOException {
        // what a writer killed mid-way leaves: a partial temporary file beside the chunk's name
        Path temp = store.layout().tempFileOf(key(1), "999999999x1", 1);
        Files.createDirectories(temp.getParent());
        Files.write(temp, new byte[] {'K', 'V', 'T', 'C', 1, 0});
        assertThat(read(store, 1, dst(5000))).isEqualTo(new DiskRead.Missing());
        BlockKey parsed = DiskLayout.keyOfFileName(temp.getFileName().toString());
        assertThat(parsed).isNull();
    }
}
