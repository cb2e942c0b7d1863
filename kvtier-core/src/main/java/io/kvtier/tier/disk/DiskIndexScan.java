package io.kvtier.tier.disk;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Rebuilds the disk tier's list of chunks from its files after a (re)start, in the background,
 * so the tier is usable at once: chunks not yet delivered are simply misses.
 *
 * <p>Two phases. <b>Listing</b>: the shard directories of this namespace are listed in parallel
 * (names and attributes only); temporary files of other processes (writes that never finished:
 * the owner holds the lock, so no other process writes) are deleted, this process's own (writes in
 * flight) are left alone. <b>Headers</b>: the chunk files, sorted by modification time (oldest first, ties by
 * key), have their headers read and checked in parallel on a small pool; results are delivered in
 * that order through a queue that the engine thread empties with {@link #drain} each step, so
 * that re-inserting them into an LRU policy restores the recency order approximately. A file
 * whose header is unreadable, damaged, of a foreign namespace, of another key than its name, or
 * whose size disagrees with its header is deleted.
 *
 * <p>Only a store that is the {@link DiskStore.Role#OWNER} deletes anything; a reader's scan only
 * reports. Deletions are limited to regular files in this namespace's shard directories: other
 * namespaces' directories, unknown names, symbolic links and anything they point to are left
 * alone (and counted as skipped).
 *
 * <p>Threads: one coordinator and {@code threads} workers, all daemons, gone when the scan ends or
 * {@link #close()} is called. {@link #drain} is for one consumer thread.
 */
public final class DiskIndexScan implements RestartScan {

    /**
     * Counts of a scan so far.
     *
     * @param filesListed      chunk files found by the listing (known once {@code listed})
     * @param filesScanned     chunk files whose header was read and judged
     * @param chunksFound      valid chunks queued for the engine
     * @param tempFilesDeleted temporary files of unfinished writes deleted
     * @param badFilesDeleted  chunk files deleted as unreadable, damaged or foreign
     * @param filesSkipped     entries left alone: unknown names, symbolic links, bad files a reader
     *                         may not delete, files that vanished while scanned
     * @param listed           the listing phase is over
     * @param ended            the scan is over (entries may still wait in the queue)
     */
    public record Progress(long filesListed, long filesScanned, long chunksFound, long tempFilesDeleted,
                           long badFilesDeleted, long filesSkipped, boolean listed, boolean ended) {

        /** One line for a terminal, e.g. {@code disk scan: 1200/5000 files, 1180 chunks, 3 deleted}. */
        public String line() {
            String of = listed ? "/" + filesListed : " (listing)";
            return "disk scan: " + filesScanned + of + " files, " + chunksFound + " chunks, "
                    + (tempFilesDeleted + badFilesDeleted) + " deleted" + (ended ? ", done" : "");
        }

        /**
         * The scans of several disk tiers (one per KV group) as one: counts added, listed and
         * ended only when both are. A null side is no scan.
         */
        public static Progress sum(Progress a, Progress b) {
            if (a == null || b == null) {
                return a == null ? b : a;
            }
            return new Progress(a.filesListed + b.filesListed, a.filesScanned + b.filesScanned,
                    a.chunksFound + b.chunksFound, a.tempFilesDeleted + b.tempFilesDeleted,
                    a.badFilesDeleted + b.badFilesDeleted, a.filesSkipped + b.filesSkipped,
                    a.listed && b.listed, a.ended && b.ended);
        }
    }

    private record Candidate(Path path, BlockKey key, BasicFileAttributes attrs) {
    }

    private static final long REPORT_EVERY_NANOS = 100_000_000L;
    private static final int FIRST_READ = 4096;
    private static final System.Logger LOG = System.getLogger(DiskIndexScan.class.getName());
    private final java.util.concurrent.ConcurrentHashMap<String, java.util.concurrent.atomic.AtomicLong> deletedByCause =
            new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicReference<Path> firstDeleted = new java.util.concurrent.atomic.AtomicReference<>();

    private final DiskStore store;
    private final Consumer<? super Progress> progress;
    /** Keys whose files this scan passes over (an immutable set, read from its threads). */
    private final Set<BlockKey> known;
    /** Keys of every chunk file the listing found; null until it is over, or if it failed. */
    private volatile Set<BlockKey> listedKeys;
    private final ExecutorService pool;
    private final ConcurrentLinkedQueue<ScannedChunk> queue = new ConcurrentLinkedQueue<>();
    private final AtomicLong listedFiles = new AtomicLong();
    private final AtomicLong scanned = new AtomicLong();
    private final AtomicLong found = new AtomicLong();
    private final AtomicLong tempDeleted = new AtomicLong();
    private final AtomicLong badDeleted = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();
    private final CountDownLatch endLatch = new CountDownLatch(1);
    private final Thread coordinator;
    private volatile boolean listed;
    private volatile boolean ended;
    private volatile boolean closed;
    private long lastReport;

    private DiskIndexScan(DiskStore store, int threads, Consumer<? super Progress> progress, Set<BlockKey> known) {
        this.store = store;
        this.progress = progress;
        this.known = known;
        this.pool = Executors.newFixedThreadPool(threads,
                Thread.ofPlatform().daemon().name("kvtier-disk-scan-", 1).factory());
        this.coordinator = Thread.ofPlatform().daemon().name("kvtier-disk-scan").unstarted(this::run);
    }

    /**
     * Starts scanning the namespace directory of {@code store} in the background.
     *
     * @param store    the disk store (its role decides whether bad files are deleted)
     * @param threads  worker threads for listing and header reads (>= 1; 2 to 8 is plenty)
     * @param progress called on the scan's coordinator thread at most every 100 ms and once at the
     *                 end ({@code ended = true}); must be quick and thread-safe
     */
    public static DiskIndexScan start(DiskStore store, int threads, Consumer<? super Progress> progress) {
        return start(store, threads, progress, Set.of());
    }

    /**
     * {@link #start(DiskStore, int, Consumer)} that neither reads nor reports the files of
     * {@code known} keys (a reader's rescan: the tier holds them already); they count as listed only.
     *
     * @param known keys whose files are passed over; read from the scan's threads, so an immutable copy
     */
    public static DiskIndexScan start(DiskStore store, int threads, Consumer<? super Progress> progress,
                                      Set<BlockKey> known) {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(known, "known");
        Objects.requireNonNull(progress, "progress");
        if (threads < 1) {
            throw new IllegalArgumentException("disk scan needs at least one thread, got " + threads);
        }
        DiskIndexScan scan = new DiskIndexScan(store, threads, progress, known);
        scan.coordinator.start();
        return scan;
    }

    @Override
    public int drain(int max, Consumer<? super ScannedChunk> sink) {
        return RestartScan.drain(queue, max, sink);
    }

    @Override
    public boolean finished() {
        return ended && queue.isEmpty();
    }

    /**
     * The keys of every chunk file the listing found (named as a chunk; headers not judged),
     * known ones included: null until the listing is over, and if it failed.
     */
    public Set<BlockKey> listedKeys() {
        return listedKeys;
    }

    @Override
    public Progress progress() {
        return new Progress(listedFiles.get(), scanned.get(), found.get(), tempDeleted.get(), badDeleted.get(),
                skipped.get(), listed, ended);
    }

    /**
     * Waits until the scan is over or {@code timeout} elapsed (for tests and for a front end that
     * prefers a complete index before serving).
     *
     * @return whether the scan is over
     */
    @Override
    public boolean awaitEnd(Duration timeout) throws InterruptedException {
        return endLatch.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Stops the scan; chunks not yet queued are never delivered (they stay misses). */
    @Override
    public void close() {
        closed = true;
        coordinator.interrupt();
        pool.shutdownNow();
        try {
            coordinator.join(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        try {
            List<Candidate> files = list();
            listedFiles.set(files.size());
            Set<BlockKey> keys = new java.util.HashSet<>();
            files.forEach(c -> keys.add(c.key()));
            listedKeys = Set.copyOf(keys);
            files.removeIf(c -> known.contains(c.key()));
            listed = true;
            report(true);
            files.sort(Comparator.comparing((Candidate c) -> c.attrs().lastModifiedTime())
                    .thenComparing(Candidate::key, DiskIndexScan::compareKeys));
            List<Future<ScannedChunk>> heads = new ArrayList<>(files.size());
            for (Candidate c : files) {
                heads.add(pool.submit(() -> judge(c)));
            }
            for (Future<ScannedChunk> f : heads) {
                ScannedChunk chunk = f.get();
                if (chunk != null) {
                    queue.add(chunk);
                    found.incrementAndGet();
                }
                scanned.incrementAndGet();
                report(false);
            }
        } catch (InterruptedException | RejectedExecutionException e) {
            // closed
        } catch (ExecutionException | IOException | RuntimeException e) {
            if (!closed) {
                LOG.log(System.Logger.Level.WARNING, "disk scan of " + store.layout().namespaceDir() + " stopped: "
                        + e, e);
            }
        } finally {
            pool.shutdownNow();
            String deletions = deletionLine();
            if (deletions != null) {
                LOG.log(System.Logger.Level.INFO, deletions);
            }
            ended = true;
            try {
                progress.accept(progress()); // before the latch: who awaited the end has seen the last report
            } finally {
                endLatch.countDown();
            }
        }
    }

    private void report(boolean force) {
        long now = System.nanoTime();
        if (force || now - lastReport >= REPORT_EVERY_NANOS) {
            lastReport = now;
            progress.accept(progress());
        }
    }

    private static int compareKeys(BlockKey a, BlockKey b) {
        int c = Long.compareUnsigned(a.w0(), b.w0());
        c = c != 0 ? c : Long.compareUnsigned(a.w1(), b.w1());
        c = c != 0 ? c : Long.compareUnsigned(a.w2(), b.w2());
        return c != 0 ? c : Long.compareUnsigned(a.w3(), b.w3());
    }

    /** Phase 1: the chunk files of every shard, listed in parallel; temporary files deleted. */
    private List<Candidate> list() throws IOException, InterruptedException, ExecutionException {
        Path ns = store.layout().namespaceDir();
        List<Future<List<Candidate>>> shards = new ArrayList<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(ns)) {
            for (Path p : dir) {
                String name = p.getFileName().toString();
                if (name.equals(DiskLayout.LOCK_FILE)) {
                    continue;
                }
                if (DiskLayout.isShardName(name) && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    shards.add(pool.submit(() -> listShard(p, name)));
                } else {
                    skipped.incrementAndGet();
                }
            }
        }
        List<Candidate> all = new ArrayList<>();
        for (Future<List<Candidate>> f : shards) {
            all.addAll(f.get());
        }
        return all;
    }

    private List<Candidate> listShard(Path shard, String shardName) throws IOException {
        List<Candidate> out = new ArrayList<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(shard)) {
            for (Path p : dir) {
                String name = p.getFileName().toString();
                BasicFileAttributes attrs;
                try {
                    attrs = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                } catch (NoSuchFileException e) {
                    continue; // an evicted or renamed file
                }
                if (!attrs.isRegularFile()) {
                    skipped.incrementAndGet();
                } else if (DiskLayout.isTempName(name)) {
                    if (!DiskLayout.tempTag(name).equals(DiskStore.PROCESS_TAG) && store.deleteIfUnchanged(p, null, attrs)) {
                        tempDeleted.incrementAndGet();
                    } else {
                        skipped.incrementAndGet(); // ours (a write in flight) or a reader's scan
                    }
                } else if (name.endsWith(DiskLayout.EXTENSION)) {
                    BlockKey key = DiskLayout.keyOfFileName(name);
                    if (key != null && DiskLayout.shardName(DiskLayout.shardOf(key)).equals(shardName)) {
                        out.add(new Candidate(p, key, attrs));
                    } else {
                        deleteBad(p, null, attrs, NOT_A_CHUNK_NAME, "not a chunk file name of this shard");
                    }
                } else {
                    skipped.incrementAndGet();
                }
            }
        }
        return out;
    }

    /** Phase 2, on a worker: the chunk described by a file's header, or null (deleted or skipped). */
    private ScannedChunk judge(Candidate c) {
        long size;
        ChunkHeader h;
        try (FileChannel ch = FileChannel.open(c.path(), StandardOpenOption.READ)) {
            size = ch.size();
            byte[] bytes = new byte[(int) Math.min(size, FIRST_READ)];
            DiskStore.readFully(ch, MemorySegment.ofArray(bytes), 0);
            if (bytes.length >= ChunkHeader.FIXED_BYTES) {
                int n = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(104);
                if (n >= 0 && ChunkHeader.encodedSize(n) > bytes.length && ChunkHeader.encodedSize(n) <= size) {
                    bytes = new byte[(int) ChunkHeader.encodedSize(n)];
                    DiskStore.readFully(ch, MemorySegment.ofArray(bytes), 0);
                }
            }
            h = ChunkHeader.readFrom(MemorySegment.ofArray(bytes), 0);
        } catch (NoSuchFileException e) {
            skipped.incrementAndGet(); // evicted meanwhile
            return null;
        } catch (IOException | IllegalArgumentException e) {
            return deleteBad(c.path(), c.key(), c.attrs(), UNREADABLE_HEADER, DiskStore.describe(e));
        }
        if (!h.namespace().equals(store.namespace())) {
            return deleteBad(c.path(), c.key(), c.attrs(), FOREIGN, "namespace " + h.namespace().shortHex());
        }
        if (!h.key().equals(c.key())) {
            return deleteBad(c.path(), c.key(), c.attrs(), OTHER_KEY, "key " + h.key().shortHex());
        }
        long expected = h.encodedSize() + h.payloadLength();
        if (size != expected) {
            return deleteBad(c.path(), c.key(), c.attrs(), size < expected ? TRUNCATED : TOO_LONG,
                    size + " bytes, header says " + expected);
        }
        return new ScannedChunk(h.key(), h.parent(), h.tokens().length, h.payloadLength(), size,
                c.attrs().lastModifiedTime().toMillis());
    }

    /** Causes a damaged chunk file is deleted under ({@link #deletedByCause()}'s keys, in this order). */
    static final String UNREADABLE_HEADER = "unreadable header";
    static final String TRUNCATED = "truncated";
    static final String TOO_LONG = "longer than its header says";
    static final String FOREIGN = "another namespace's chunk";
    static final String OTHER_KEY = "another key's chunk";
    static final String NOT_A_CHUNK_NAME = "not a chunk file name";
    private static final List<String> CAUSES = List.of(UNREADABLE_HEADER, TRUNCATED, TOO_LONG, FOREIGN, OTHER_KEY,
            NOT_A_CHUNK_NAME);

    private ScannedChunk deleteBad(Path p, BlockKey key, BasicFileAttributes attrs, String cause, String detail) {
        if (store.deleteIfUnchanged(p, key, attrs)) {
            // One line at the end sums them up; each file's detail is for DEBUG.
            LOG.log(System.Logger.Level.DEBUG, () -> "disk scan: deleted " + p + ": " + cause + " (" + detail + ")");
            deletedByCause.computeIfAbsent(cause, c -> new java.util.concurrent.atomic.AtomicLong()).incrementAndGet();
            firstDeleted.compareAndSet(null, p);
            badDeleted.incrementAndGet();
        } else {
            skipped.incrementAndGet();
        }
        return null;
    }

    /** Damaged chunk files this scan deleted, per cause (causes with none left out), in a fixed order. */
    public java.util.Map<String, Long> deletedByCause() {
        java.util.Map<String, Long> m = new java.util.LinkedHashMap<>();
        for (String c : CAUSES) {
            var n = deletedByCause.get(c);
            if (n != null) {
                m.put(c, n.get());
            }
        }
        return m;
    }

    /**
     * The one line the scan logs at its end when it deleted damaged chunk files, e.g. {@code disk scan of
     * DIR: deleted 3 damaged chunk files (unreadable header 2, truncated 1), the first DIR/ab/x.kvc}; null when none.
     */
    String deletionLine() {
        java.util.Map<String, Long> by = deletedByCause();
        if (by.isEmpty()) {
            return null;
        }
        long n = by.values().stream().mapToLong(Long::longValue).sum();
        StringBuilder causes = new StringBuilder();
        by.forEach((c, k) -> causes.append(causes.isEmpty() ? "" : ", ").append(c).append(' ').append(k));
        return "disk scan of " + store.layout().namespaceDir() + ": deleted " + n + " damaged chunk file"
                + (n == 1 ? "" : "s") + " (" + causes + "), " + (n == 1 ? "" : "the first ") + firstDeleted.get();
    }
}
