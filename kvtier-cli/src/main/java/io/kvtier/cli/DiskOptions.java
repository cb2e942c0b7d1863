package io.kvtier.cli;

import io.kvtier.engine.OffloadSetup;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.tier.disk.DiskCapacity;
import io.kvtier.tier.disk.DiskFsync;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The disk tier behind the host tier: {@code --disk-cache-dir} and the flags that need it. */
public final class DiskOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--disk-cache-dir", paramLabel = "DIR",
            description = "put a disk KV tier behind the host tier in DIR (survives restarts; one subdirectory per model namespace)")
    Path dir;

    @Option(names = "--disk-cache-bytes", defaultValue = "1G", paramLabel = "SIZE",
            description = "disk tier budget in bytes (K/M/G/T and Ki/Mi/Gi/Ti are powers of 1024; default ${DEFAULT-VALUE})")
    String bytes;

    @Option(names = "--disk-write-policy", defaultValue = "through", paramLabel = "through|on-evict",
            description = "through (default: after every host store) or on-evict (when the host tier evicts)")
    String writePolicy;

    @Option(names = "--disk-fsync", defaultValue = "none", paramLabel = "none|data|data-and-dir",
            description = "none (default), data (fdatasync before publishing), data-and-dir (and the directory)")
    String fsync;

    @Option(names = "--disk-admit-after", defaultValue = "1", paramLabel = "N",
            description = "write a chunk to disk only from its N-th use (default ${DEFAULT-VALUE})")
    int admitAfter;

    @Option(names = "--disk-scan-wait", defaultValue = "10s", converter = TimeFlag.Seconds.class, paramLabel = "TIME",
            description = "at start, wait up to this long for the scan of existing files, e.g. 10s or 500ms (a plain number is "
                    + "seconds; default ${DEFAULT-VALUE}; 0: start at once, chunks not scanned yet are misses)")
    Duration scanWait;

    /**
     * Test seam: the bytes a new file may take on the filesystem holding an existing directory
     * ({@link java.nio.file.FileStore#getUsableSpace}; -1: unknown).
     */
    static java.util.function.ToLongFunction<Path> usableSpace = DiskOptions::usableBytes;

    /** What the filesystem can give the tier when that is below the budget, else -1 ({@link #setup}). */
    private long room = -1;
    private long budget = -1;
    /** The line {@link #warnRoom} prints (null: nothing to say), and whether it did. */
    private String roomWarning;
    private boolean warned;

    /** The disk tier's directory, or null if there is no disk tier. */
    public Path dir() {
        return dir;
    }

    /**
     * Once the engine is built: says in one line why the disk tier only reads its directory, if it
     * does (another process owns it), then waits up to {@code --disk-scan-wait} for the disk tier's
     * scan of existing files (nothing to wait for without offloading), and ends the scan's progress
     * line on a terminal. The same for {@code generate} and {@code serve}. Call it before
     * {@link #warnRoom}: a process that only reads gets no warning about room for its writes.
     */
    public void opened(io.kvtier.engine.Engine engine, boolean terminal) {
        String readOnly = engine.offload() == null ? null : engine.offload().diskReadOnlyReason();
        if (readOnly != null) {
            System.err.println("kvtier: " + readOnly);
            roomWarning = null; // this process writes nothing there: the filesystem's room is the owner's concern
            room = -1;
        }
        if (engine.offload() != null && !scanWait().isZero()) {
            engine.offload().awaitDiskScan(scanWait());
            if (dir() != null && terminal) {
                System.err.println(); // end the scan's progress line
            }
        }
    }

    /** How long to wait for the restart scan (zero: not at all). */
    public Duration scanWait() {
        return TimeFlag.inRange(mixee, "--disk-scan-wait", scanWait, Duration.ZERO, Duration.ofDays(1));
    }

    /**
     * The disk tier, or null without {@code --disk-cache-dir}.
     *
     * @param terminal whether the restart scan draws a progress line on stderr
     * @throws BadInputException for a bad value, or a disk flag given without {@code --disk-cache-dir}
     */
    public OffloadSetup.DiskSetup setup(boolean terminal) {
        scanWait();
        Checks.atLeast(admitAfter, 1, "--disk-admit-after");
        Checks.needs(mixee, dir != null, "--disk-cache-dir", "--disk-cache-bytes", "--disk-write-policy", "--disk-fsync",
                "--disk-admit-after", "--disk-scan-wait");
        if (dir == null) {
            return null;
        }
        Checks.directory(dir, "--disk-cache-dir");
        DiskWritePolicy policy;
        DiskFsync sync;
        try {
            policy = DiskWritePolicy.parse(writePolicy);
        } catch (IllegalArgumentException e) {
            throw new BadInputException("--disk-write-policy must be through or on-evict, got '" + writePolicy + "'");
        }
        try {
            sync = DiskFsync.parse(fsync);
        } catch (IllegalArgumentException e) {
            throw new BadInputException("--disk-fsync must be none, data or data-and-dir, got '" + fsync + "'");
        }
        long budget = Sizes.parseBytes(bytes, "--disk-cache-bytes");
        if (budget < 1) { // zero would be a disk tier that can hold nothing
            throw new BadInputException("--disk-cache-bytes must be at least 1 byte, got '" + bytes
                    + "' (leave out --disk-cache-dir for no disk tier)");
        }
        this.budget = budget;
        measureRoom();
        return new OffloadSetup.DiskSetup(dir, budget, policy, sync, admitAfter,
                terminal ? p -> System.err.print("\r" + p.line()) : null, line -> System.err.println("kvtier: " + line));
    }

    /**
     * Measures whether the budget is more than the filesystem can hold (its usable space plus the
     * tier's own files, which it may overwrite), on the directory's nearest existing ancestor when
     * the tier is to create it. If so, the tier fills the filesystem and its later writes fail
     * (counted, never a wrong token), and the capacity in the summary is the budget's, not the
     * disk's (a new user's trial: "1 used of 43690" on a 40 KiB tmpfs): {@link #warnRoom} says so
     * and {@link #roomNote} gives the disk's figure. Files count as the budget counts them, in
     * whole allocation units ({@link DiskCapacity#DEFAULT_ALLOCATION_UNIT}).
     */
    private void measureRoom() {
        room = -1;
        roomWarning = null;
        Path existing = existingAncestor(dir);
        long free = existing == null ? -1 : usableSpace.applyAsLong(existing);
        if (free < 0) {
            return;   // unknown: nothing to say
        }
        long own = ownFiles(dir);
        if (free + own >= budget) {
            return;
        }
        room = free + own;
        roomWarning = "kvtier: --disk-cache-bytes " + bytes + " is more than the filesystem of " + dir + " holds: about "
                + Sizes.describe(room) + (own > 0 ? " (" + Sizes.describe(own) + " of them the tier's own files)" : "")
                + "; once it is full, disk writes fail and are counted";
    }

    /**
     * Prints the one stderr line on a budget beyond the filesystem ({@link #measureRoom}), once
     * per process however often {@link #setup} ran: call it when the run's input is all checked,
     * so that a run refused for bad input does not print it.
     */
    public void warnRoom() {
        if (roomWarning != null && !warned) {
            warned = true;
            System.err.println(roomWarning);
        }
    }

    /**
     * One disk tier's figures for {@link #roomNote}.
     *
     * @param capacity   its capacity in chunks (from the budget)
     * @param used       chunks it holds
     * @param chunkBytes bytes one chunk file takes on disk, as the budget counts them
     *                   ({@link DiskCapacity#allocatedBytes})
     */
    public record TierRoom(long capacity, long used, long chunkBytes) {
    }

    /**
     * The summary's note on the disk tiers' capacity: {@code " (the filesystem holds about N)"}
     * when their budget is more than the filesystem holds, else "". N counts the room as the
     * capacity is counted, in whole chunk files of {@code chunkBytes} (shared between several
     * tiers, one per KV group, as their budgets are), and is never below the chunks they hold.
     */
    public String roomNote(java.util.List<TierRoom> tiers) {
        if (room < 0 || tiers.isEmpty()) {
            return "";
        }
        double budgets = tiers.stream().mapToDouble(t -> (double) t.capacity() * t.chunkBytes()).sum();
        long chunks = 0;
        for (TierRoom t : tiers) {
            long share = tiers.size() == 1 ? room : (long) (room * ((double) t.capacity() * t.chunkBytes() / budgets));
            chunks += Math.max(t.used(), share / Math.max(1, t.chunkBytes()));
        }
        return " (the filesystem holds about " + chunks + ")";
    }

    /**
     * {@link #roomNote(java.util.List)} for the disk tiers of {@code engine} as they are now: generate's
     * summary gives it after their capacity, serve's {@code kvtier:tier_chunks_capacity} in its HELP.
     */
    public String roomNote(io.kvtier.engine.Engine engine) {
        return roomNote(rooms(engine));
    }

    /** Each disk tier's capacity, chunks held and allocated bytes a chunk; empty without one. */
    static java.util.List<TierRoom> rooms(io.kvtier.engine.Engine engine) {
        io.kvtier.offload.OffloadScheduler off = engine.offload();
        java.util.List<TierRoom> out = new java.util.ArrayList<>();
        for (io.kvtier.offload.OffloadScheduler g : off == null ? java.util.List.<io.kvtier.offload.OffloadScheduler>of()
                : io.kvtier.offload.GroupStats.schedulers(off)) {
            io.kvtier.tier.TierIndex d = g.diskIndex();
            if (d != null && g.host().hasSlab()) {
                out.add(new TierRoom(d.capacity(), d.capacity() - d.freeSlots(), DiskCapacity.allocatedBytes(
                        g.host().slab().payloadBytesPerChunk(), g.host().slab().maxTokensPerChunk(), DiskCapacity.DEFAULT_ALLOCATION_UNIT)));
            }
        }
        return out;
    }

    /** {@code dir} if it exists, else its nearest ancestor that does (the tier creates the rest); null if none. */
    static Path existingAncestor(Path dir) {
        Path p = dir.toAbsolutePath();
        while (p != null && !java.nio.file.Files.exists(p)) {
            p = p.getParent();
        }
        return p;
    }

    private static long usableBytes(Path dir) {
        try {
            return java.nio.file.Files.getFileStore(dir).getUsableSpace();
        } catch (java.io.IOException | SecurityException e) {
            return -1;
        }
    }

    /**
     * Bytes of the tier's chunk files ({@code *.kvc}) below {@code dir}, each rounded up to whole
     * allocation units as the budget counts it; 0 when absent or unreadable.
     */
    static long ownFiles(Path dir) {
        if (!java.nio.file.Files.isDirectory(dir)) {
            return 0;
        }
        long unit = DiskCapacity.DEFAULT_ALLOCATION_UNIT;
        try (java.util.stream.Stream<Path> all = java.nio.file.Files.walk(dir)) {
            return all.filter(f -> f.getFileName().toString().endsWith(".kvc")).mapToLong(f -> {
                try {
                    return (java.nio.file.Files.size(f) + unit - 1) / unit * unit;
                } catch (java.io.IOException e) {
                    return 0;
                }
            }).sum();
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
            return 0;
        }
    }
}
