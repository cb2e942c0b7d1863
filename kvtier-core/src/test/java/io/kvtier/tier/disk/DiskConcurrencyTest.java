package io.kvtier.tier.disk;

import static io.kvtier.tier.disk.Chunks.NS;
import static io.kvtier.tier.disk.Chunks.header;
import static io.kvtier.tier.disk.Chunks.key;
import static io.kvtier.tier.disk.Chunks.payload;
import static io.kvtier.tier.disk.Chunks.read;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two stores on one directory (one owner, one reader) and several threads per store: the lock
 * decides who writes; atomic publishing means no reader, in any store, ever accepts a bad chunk.
 */
class DiskConcurrencyTest {

    static final long CHILD_PAYLOAD = 5000;
    private static final long BIG = DiskStore.READ_PIECE * 8L + 123; // 1 MiB, pieces on two threads: a wide window for races
    private static final int VERSIONS = 3;

    @TempDir
    Path root;

    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        arena.close();
    }

    @Test
    void theSecondStoreOnADirectoryReadsButNeverWritesOrDeletes() throws IOException {
        try (DiskStore owner = DiskStore.open(root, NS, DiskFsync.NONE);
             DiskStore reader = DiskStore.open(root, NS, DiskFsync.NONE);
             DiskStore otherNamespace = DiskStore.open(root, Chunks.OTHER_NS, DiskFsync.NONE)) {
            assertThat(owner.role()).isEqualTo(DiskStore.Role.OWNER);
            assertThat(reader.role()).isEqualTo(DiskStore.Role.READER);
            assertThat(otherNamespace.role()).isEqualTo(DiskStore.Role.OWNER); // a lock per namespace
            MemorySegment p = payload(arena, 1000, 1);
            write(owner, 1, p);
            MemorySegment back = arena.allocate(1000);
            assertThat(read(reader, 1, back)).isEqualTo(new DiskRead.Ok(header(NS, 1, p)));
            assertThat(reader.write(key(2), header(NS, 2, p), p)).isInstanceOfSatisfying(DiskWrite.Failed.class,
                    f -> assertThat(f.reason()).contains("owned by another engine"));
            assertThat(owner.layout().fileOf(key(2))).doesNotExist();
            assertThat(reader.delete(key(1))).isFalse();
            assertThat(owner.layout().fileOf(key(1))).exists();
            assertThat(reader.tryBecomeOwner()).isFalse();
            owner.close();
            assertThat(reader.tryBecomeOwner()).isTrue();
            assertThat(reader.role()).isEqualTo(DiskStore.Role.OWNER);
            write(reader, 2, p);
            assertThat(reader.delete(key(1))).isTrue();
        }
    }

    @Test
    void aStoreOfAnotherProcessOwnsTheDirectoryUntilItExits() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                LockHolderMain.class.getName(), root.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            assertThat(out.readLine()).isEqualTo("OWNER");
            try (DiskStore store = DiskStore.open(root, NS, DiskFsync.NONE)) {
                assertThat(store.role()).isEqualTo(DiskStore.Role.READER);
                MemorySegment back = arena.allocate(CHILD_PAYLOAD);
                assertThat(read(store, 1, back).ok()).isTrue(); // starts warm from the other process's chunk
                assertThat(back.mismatch(payload(arena, CHILD_PAYLOAD, 1))).isEqualTo(-1L);
                MemorySegment p = payload(arena, 100, 2);
                assertThat(store.write(key(2), header(NS, 2, p), p).ok()).isFalse();
                child.getOutputStream().close();
                assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
                assertThat(store.tryBecomeOwner()).isTrue();
                write(store, 2, p);
            }
        } finally {
            child.destroyForcibly();
        }
    }

    /** Outcome counts of reads that ran while writers and deleters worked. */
    private record Tally(long ok, long missing, List<String> bad) {
    }

    /** Reads key 1 in a loop until {@code stop}; Ok must carry one of the versions' exact bytes. */
    private Tally readUntil(DiskStore store, AtomicBoolean stop, MemorySegment[] versions) {
        MemorySegment back = arena.allocate(BIG);
        long ok = 0;
        long missing = 0;
        List<String> bad = new ArrayList<>();
        while (!stop.get() || ok + missing == 0) {
            DiskRead r = read(store, 1, back);
            switch (r) {
                case DiskRead.Ok o -> {
                    boolean matches = false;
                    for (MemorySegment v : versions) {
                        matches |= back.mismatch(v) == -1 && o.header().payloadCrc() == io.kvtier.tier.ChunkHeader.crc32c(v);
                    }
                    if (!matches) {
                        bad.add("Ok with bytes of no written version");
                    }
                    ok++;
                }
                case DiskRead.Missing m -> missing++;
                case DiskRead.Corrupt c -> bad.add(c.reason());
            }
        }
        return new Tally(ok, missing, bad);
    }

    private MemorySegment[] versions() {
        MemorySegment[] v = new MemorySegment[VERSIONS];
        for (int i = 0; i < VERSIONS; i++) {
            v[i] = payload(arena, BIG, 100 + i);
        }
        return v;
    }

    private static Thread start(Runnable r) {
        return Thread.ofPlatform().start(r);
    }

    @Test
    void concurrentWritesOfOneKeyNeverYieldAnAcceptedBadRead() throws Exception {
        MemorySegment[] versions = versions();
        try (DiskStore owner = DiskStore.open(root, NS, DiskFsync.NONE);
             DiskStore reader = DiskStore.open(root, NS, DiskFsync.NONE)) {
            write(owner, 1, versions[0]);
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<String> writeFailures = new ConcurrentLinkedQueue<>();
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < VERSIONS; w++) {
                MemorySegment v = versions[w];
                writers.add(start(() -> {
                    for (int n = 0; n < 60; n++) {
                        DiskWrite r = owner.write(key(1), header(NS, 1, v), v);
                        if (!r.ok()) {
                            writeFailures.add(r.toString());
                        }
                    }
                }));
            }
            Tally[] tallies = new Tally[2];
            Thread r0 = start(() -> tallies[0] = readUntil(owner, stop, versions));
            Thread r1 = start(() -> tallies[1] = readUntil(reader, stop, versions));
            for (Thread t : writers) {
                t.join();
            }
            stop.set(true);
            r0.join();
            r1.join();
            assertThat(writeFailures).isEmpty();
            for (Tally t : tallies) {
                assertThat(t.bad()).isEmpty();
                assertThat(t.missing()).isZero(); // the key always has a complete file
                assertThat(t.ok()).isPositive();
            }
            assertThat(tempFiles()).isEmpty();
        }
    }

    @Test
    void deletesWhileReadingGiveMissingOrTheWholeChunkNeverABadOne() throws Exception {
        MemorySegment[] versions = versions();
        try (DiskStore owner = DiskStore.open(root, NS, DiskFsync.NONE);
             DiskStore reader = DiskStore.open(root, NS, DiskFsync.NONE)) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong deleted = new AtomicLong();
            Thread churn = start(() -> {
                for (int n = 0; n < 150; n++) {
                    MemorySegment v = versions[n % VERSIONS];
                    if (owner.write(key(1), header(NS, 1, v), v).ok() && owner.delete(key(1))) {
                        deleted.incrementAndGet();
                    }
                }
            });
            Tally[] tallies = new Tally[2];
            Thread r0 = start(() -> tallies[0] = readUntil(owner, stop, versions));
            Thread r1 = start(() -> tallies[1] = readUntil(reader, stop, versions));
            churn.join();
            stop.set(true);
            r0.join();
            r1.join();
            assertThat(deleted.get()).isEqualTo(150);
            for (Tally t : tallies) {
                assertThat(t.bad()).isEmpty();
                assertThat(t.ok() + t.missing()).isPositive();
            }
            assertThat(owner.layout().fileOf(key(1))).doesNotExist();
            assertThat(tempFiles()).isEmpty();
        }
    }

    @Test
    void concurrentWritesOfDifferentKeysAllLand() throws Exception {
        int threads = 4;
        int perThread = 40;
        MemorySegment p = payload(arena, 20_000, 5);
        try (DiskStore owner = DiskStore.open(root, NS, DiskFsync.NONE)) {
            List<Thread> ts = new ArrayList<>();
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            for (int t = 0; t < threads; t++) {
                int base = t * perThread;
                ts.add(start(() -> {
                    for (int i = base; i < base + perThread; i++) {
                        DiskWrite w = owner.write(key(i), header(NS, i, p), p);
                        if (!w.ok()) {
                            failures.add(w.toString());
                        }
                    }
                }));
            }
            for (Thread t : ts) {
                t.join();
            }
            assertThat(failures).isEmpty();
            MemorySegment back = arena.allocate(20_000);
            for (int i = 0; i < threads * perThread; i++) {
                assertThat(read(owner, i, back)).as("chunk %d", i).isEqualTo(new DiskRead.Ok(header(NS, i, p)));
            }
            try (Stream<Path> s = Files.walk(owner.layout().namespaceDir())) {
                assertThat(s.filter(f -> f.toString().endsWith(".kvc")).count()).isEqualTo(threads * perThread);
            }
            assertThat(tempFiles()).isEmpty();
        }
    }

    private List<Path> tempFiles() throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(p -> DiskLayout.isTempName(p.getFileName().toString())).toList();
        }
    }
}
