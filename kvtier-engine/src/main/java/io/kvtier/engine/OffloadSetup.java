package io.kvtier.engine;

import io.kvtier.kv.BlockPool;
import io.kvtier.kv.Namespace;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.offload.DiskTierParts;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.transfer.AsyncTransferEngine;
import io.kvtier.offload.transfer.ChunkCopier;
import io.kvtier.offload.transfer.DiskCopier;
import io.kvtier.offload.RemoteTierParts;
import io.kvtier.offload.transfer.RemoteCopier;
import io.kvtier.tier.remote.LettuceRemoteStore;
import io.kvtier.tier.remote.RemoteKeys;
import io.kvtier.tier.remote.RemoteSettings;
import io.kvtier.tier.remote.RemoteStore;
import java.time.Duration;
import io.kvtier.tier.TierIndex;
import io.kvtier.tier.disk.DiskCapacity;
import io.kvtier.tier.disk.DiskFsync;
import io.kvtier.tier.disk.DiskIndexScan;
import io.kvtier.tier.disk.DiskStore;
import io.kvtier.tier.disk.ReaderRescan;
import io.kvtier.tier.disk.RestartScan;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Consumer;
import io.kvtier.tier.CachePolicy;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.KvEvents;

/**
 * How to build the offload tiers of an engine.
 *
 * @param hostBytes  memory of the host tier in bytes (headers included); 0 with
 *                   {@code hostChunks} 0 turns offloading off
 * @param hostChunks capacity in chunks instead of bytes (wins when > 0)
 * @param eviction   {@code lru} or {@code arc}
 * @param config     chunking, decode blocks, deadlines, admission
 */
public record OffloadSetup(long hostBytes, int hostChunks, String eviction, OffloadConfig config, DiskSetup disk,
                           RemoteSetup remote) {

    public static final OffloadSetup OFF = new OffloadSetup(0, 0, "lru", OffloadConfig.DEFAULT);

    /** Why a lazy store policy is refused for a model with several KV groups (here, and by the CLI before the model loads). */
    public static final String LAZY_WITH_GROUPS =
            "--store-policy lazy is not built for a model with sliding-window layers: use --store-policy eager";

    /** Whether this setup would be refused for a model with several KV groups ({@link #LAZY_WITH_GROUPS}). */
    public boolean refusesKvGroups() {
        return enabled() && config.storePolicy().lazy();
    }

    /** Host tier only. */
    public OffloadSetup(long hostBytes, int hostChunks, String eviction, OffloadConfig config) {
        this(hostBytes, hostChunks, eviction, config, null, null);
    }

    /** Host tier and, if not null, a disk tier. */
    public OffloadSetup(long hostBytes, int hostChunks, String eviction, OffloadConfig config, DiskSetup disk) {
        this(hostBytes, hostChunks, eviction, config, disk, null);
    }

    /** The same setup with a remote tier (null for none). */
    public OffloadSetup withRemote(RemoteSetup r) {
        return new OffloadSetup(hostBytes, hostChunks, eviction, config, disk, r);
    }

    /**
     * The remote tier (Redis / Valkey) behind the host tier.
     *
     * @param settings         where the store is and how to talk to it
     * @param policy           write-through or write on host eviction
     * @param admitAfter       write a chunk only from its N-th use
     * @param maxBytesInFlight bytes of values being written at once; more are dropped and counted
     * @param warn             where the one line goes if the tier turns itself off (stderr in the CLI)
     */
    public record RemoteSetup(RemoteSettings settings, DiskWritePolicy policy, int admitAfter, long maxBytesInFlight,
                              Consumer<String> warn) {
        public RemoteSetup {
            if (admitAfter < 1) {
                throw new IllegalArgumentException("remote admit-after must be at least 1, got " + admitAfter);
            }
            if (maxBytesInFlight <= 0) {
                throw new IllegalArgumentException("remote bytes in flight must be positive, got " + maxBytesInFlight);
            }
        }

        RemoteTierParts parts(RemoteStore store, RemoteKeys keys) {
            return new RemoteTierParts(store, keys, policy, admitAfter, maxBytesInFlight, settings.timeout(), REMOTE_HINT_TTL);
        }
    }

    /**
     * How long the remote tier trusts that a chunk is in the store after it wrote it or a probe
     * found it: such a chunk counts as a hit and is not written again meanwhile. A store TTL
     * shorter than this drops chunks while the engine still counts them stored (the CLI refuses one).
     */
    public static final Duration REMOTE_HINT_TTL = Duration.ofSeconds(2);

    /**
     * The disk tier behind the host tier.
     *
     * @param dir        root directory (created if absent); namespaces get their own subdirectories
     * @param bytes      disk budget in bytes (file sizes rounded up to 4 KiB allocation units)
     * @param policy     write-through or write on host eviction
     * @param fsync      what is forced to disk before a file is published
     * @param admitAfter write a chunk to disk only from its N-th use
     * @param progress   restart-scan progress (a terminal line), or null
     * @param warn       where the first write failure of each cause goes as one line (full disk,
     *                   read-only, permission; stderr in the CLI), or null
     * @param rescanEvery when this process only reads the directory (another owns it): how long after
     *                   one scan of the directory ends the next starts, to find the owner's later
     *                   chunks ({@link ReaderRescan}; default {@link #RESCAN_EVERY})
     */
    public record DiskSetup(Path dir, long bytes, DiskWritePolicy policy, DiskFsync fsync, int admitAfter,
                            Consumer<DiskIndexScan.Progress> progress, Consumer<String> warn, Duration rescanEvery) {

        /**
         * Default of {@link #rescanEvery}: a reader finds the owner's new chunks within a few
         * seconds, for one directory listing (names only; headers of new files) each time.
         */
        public static final Duration RESCAN_EVERY = Duration.ofSeconds(5);

        /** Rescanning every {@link #RESCAN_EVERY} when only reading. */
        public DiskSetup(Path dir, long bytes, DiskWritePolicy policy, DiskFsync fsync, int admitAfter,
                         Consumer<DiskIndexScan.Progress> progress, Consumer<String> warn) {
            this(dir, bytes, policy, fsync, admitAfter, progress, warn, RESCAN_EVERY);
        }

        /** Without a warning sink. */
        public DiskSetup(Path dir, long bytes, DiskWritePolicy policy, DiskFsync fsync, int admitAfter,
                         Consumer<DiskIndexScan.Progress> progress) {
            this(dir, bytes, policy, fsync, admitAfter, progress, null);
        }

        public DiskSetup {
            if (bytes <= 0) {
                throw new IllegalArgumentException("disk cache bytes must be positive, got " + bytes);
            }
            if (admitAfter < 1) {
                throw new IllegalArgumentException("disk admit-after must be at least 1, got " + admitAfter);
            }
            java.util.Objects.requireNonNull(rescanEvery, "rescanEvery");
        }

        /** The same with another {@link #rescanEvery}. */
        public DiskSetup withRescanEvery(Duration every) {
            return new DiskSetup(dir, bytes, policy, fsync, admitAfter, progress, warn, every);
        }
    }

    public OffloadSetup {
        if (hostBytes < 0 || hostChunks < 0) {
            throw new IllegalArgumentException("host tier size must not be negative");
        }
        CachePolicy.named(eviction, 1); // validates the name
    }

    public boolean enabled() {
        return hostBytes > 0 || hostChunks > 0;
    }

    /**
     * The offload scheduler of a model with KV groups {@code groups} over their device pools
     * {@code pools} (same order): one scheduler per group, each with its own host tier, disk
     * directory and remote keys (the window groups' under a group-qualified namespace), group 0's
     * given the others ({@link OffloadScheduler#ofGroups}). The host and disk budgets in bytes are
     * split by the groups' bytes per block (a capacity in chunks is each group's). A one-group model
     * gets exactly {@link #build(BlockPool, Namespace, KvEvents)}. Tier events are group 0's only
     * (its keys are the chain keys a router computes). Null when offloading is off.
     */
    public OffloadScheduler build(java.util.List<BlockPool> pools, java.util.List<io.kvtier.kv.KvGroup> groups, Namespace namespace,
                                  KvEvents events) {
        if (groups.size() == 1 || !enabled()) {
            return build(pools.getFirst(), namespace, events);
        }
        if (refusesKvGroups()) {
            // Checked before anything is built: no tier or transfer thread to clean up.
            throw new IllegalArgumentException(LAZY_WITH_GROUPS);
        }
        TierBudgets.check(this, pools.stream().map(BlockPool::layout).toList());
        long total = 0;
        for (BlockPool p : pools) {
            total += p.layout().bytesPerBlock();
        }
        java.util.List<OffloadScheduler> parts = new java.util.ArrayList<>();
        java.util.function.Consumer<String> oversize = oversizeLine();
        try (LettuceRemoteStore store = openRemote()) {
            OffloadScheduler full = share(pools.getFirst(), total).build(pools.getFirst(), namespace, events, null, store, oversize);
            parts.add(full);
            for (int g = 1; g < groups.size(); g++) {
                io.kvtier.kv.KvGroup group = groups.get(g);
                Namespace ns = new Namespace(namespace.description() + "|group=" + group,
                        group.key(namespace.digest()), namespace.blocksPerChunk());
                parts.add(share(pools.get(g), total).build(pools.get(g), ns, KvEvents.discarding(), group, store, oversize));
            }
            return OffloadScheduler.ofGroups(full, parts.subList(1, parts.size()));
        } catch (RuntimeException e) {
            parts.forEach(OffloadScheduler::close);
            throw e;
        }
    }

    /**
     * The remote store, opened once for every KV group's tier (each group keeps its own keys): one
     * connection, one breaker per node, so an outage is one line and one opening, not one per group
     * (a trial: a gemma3 engine said "stopped answering" and "answers again" twice). Each group's
     * tier takes a share ({@link LettuceRemoteStore#retain}); the caller closes its own. Null
     * without a remote tier, or without the host tier it sits behind (refused by the build).
     */
    private LettuceRemoteStore openRemote() {
        return remote != null && enabled() ? LettuceRemoteStore.open(remote.settings(), remote.warn()) : null;
    }

    /** This setup with the byte budgets cut to {@code pool}'s share of {@code totalBytesPerBlock}. */
    private OffloadSetup share(BlockPool pool, long totalBytesPerBlock) {
        DiskSetup d = disk == null ? null : new DiskSetup(disk.dir(), share(disk.bytes(), pool, totalBytesPerBlock), disk.policy(),
                disk.fsync(), disk.admitAfter(), disk.progress(), disk.warn());
        return new OffloadSetup(hostChunks > 0 ? hostBytes : share(hostBytes, pool, totalBytesPerBlock), hostChunks, eviction,
                config, d, remote);
    }

    /** {@code pool}'s part of {@code budget} ({@link TierBudgets#share}). */
    private static long share(long budget, BlockPool pool, long totalBytesPerBlock) {
        return TierBudgets.share(budget, pool.layout().bytesPerBlock(), totalBytesPerBlock);
    }

    /**
     * The offload scheduler for {@code pool}: a host tier, an {@link AsyncTransferEngine}
     * between the pool's slab and the host slots. Null when offloading is off.
     *
     * @throws IllegalArgumentException if the host tier cannot hold a single chunk
     */
    public OffloadScheduler build(BlockPool pool, Namespace namespace, KvEvents events) {
        TierBudgets.check(this, java.util.List.of(pool.layout()));
        try (LettuceRemoteStore store = openRemote()) {
            return build(pool, namespace, events, null, store, oversizeLine());
        }
    }

    /**
     * Where every KV group's remote copier says that values exceed the store's limit: the remote
     * warning sink, passing on only the first such line. Each copier says it once; a hybrid model's
     * groups (a trial: a gemma3 engine said it twice) share this sink, so the engine says it once.
     * Null without a remote tier.
     */
    private java.util.function.Consumer<String> oversizeLine() {
        if (remote == null || remote.warn() == null) {
            return null;
        }
        java.util.function.Consumer<String> warn = remote.warn();
        java.util.concurrent.atomic.AtomicBoolean said = new java.util.concurrent.atomic.AtomicBoolean();
        return line -> {
            if (said.compareAndSet(false, true)) {
                warn.accept(line);
            }
        };
    }

    /**
     * {@link #build(BlockPool, Namespace, KvEvents)} for window group {@code group} (null: group 0),
     * its remote tier on {@code shared} ({@link #openRemote}; null without one), saying values too
     * large for the store through {@code oversize} ({@link #oversizeLine}, shared by the groups).
     */
    private OffloadScheduler build(BlockPool pool, Namespace namespace, KvEvents events, io.kvtier.kv.KvGroup group,
                                   LettuceRemoteStore shared, java.util.function.Consumer<String> oversize) {
        if (!enabled()) {
            if (disk != null || remote != null) {
                throw new IllegalArgumentException("the disk and remote tiers sit behind the host tier: give the host tier a size too");
            }
            return null;
        }
        long payload = config.blocksPerChunk() * pool.layout().bytesPerBlock();
        int tokens = config.blocksPerChunk() * pool.layout().blockSize();
        HostTier host = hostChunks > 0
                ? new HostTier(hostChunks, payload, tokens, CachePolicy.named(eviction, hostChunks), events)
                : HostTier.ofBytes(hostBytes, payload, tokens, eviction, events);
        ChunkCopier copier = new ChunkCopier(pool.slab(), pool.layout().bytesPerBlock(), host.slab());
        RemoteStore remoteStore = null;
        RemoteCopier remoteCopier = null;
        RemoteKeys remoteKeys = null;
        if (remote != null) {
            remoteStore = shared.retain(); // this group's tier closes its share
            remoteKeys = new RemoteKeys(remote.settings().tenant(), namespace.digest());
            checkKeys(remoteStore, remoteKeys, remote.settings().timeout());
            remoteCopier = new RemoteCopier(host.slab(), remoteStore, remoteKeys, pool.layout().bytesPerBlock());
            remoteCopier.warnOversize(oversize);
        }
        RemoteTierParts remoteParts = remote == null ? null : remote.parts(remoteStore, remoteKeys);
        if (disk == null) {
            return new OffloadScheduler(config, pool, host, new AsyncTransferEngine(copier, null, remoteCopier), namespace,
                    null, remoteParts, group);
        }
        DiskStore store;
        try {
            store = DiskStore.open(disk.dir(), namespace.digest(), disk.fsync());
            store.warnWriteFailures(disk.warn());
        } catch (IOException | RuntimeException e) {
            if (remoteStore != null) {
                remoteStore.close();
            }
            host.close();
            throw new IllegalArgumentException("disk cache dir " + disk.dir() + ": cannot open (" + withReason(e) + ")", e);
        }
        int chunks;
        try {
            chunks = DiskCapacity.chunksFor(disk.bytes(), payload, tokens); // refuses more chunks than an int holds
            if (chunks == 0) {
                throw TierBudgets.tooSmall("--disk-cache-bytes", disk.bytes(), 1,
                        DiskCapacity.allocatedBytes(payload, tokens, DiskCapacity.DEFAULT_ALLOCATION_UNIT));
            }
        } catch (IllegalArgumentException e) {
            if (remoteStore != null) {
                remoteStore.close();
            }
            store.close();
            host.close();
            throw e;
        }
        TierIndex index = new TierIndex("disk", chunks, CachePolicy.behindHost(eviction, chunks), events);
        RestartScan scan = DiskIndexScan.start(store, 2, disk.progress() == null ? p -> { } : disk.progress());
        if (store.role() == DiskStore.Role.READER) {
            scan = ReaderRescan.of(store, scan, disk.rescanEvery(), index::keys);
        }
        AsyncTransferEngine transfers = new AsyncTransferEngine(copier,
                new DiskCopier(host.slab(), store, pool.layout().bytesPerBlock()), remoteCopier);
        return new OffloadScheduler(config, pool, host, transfers, namespace,
                new DiskTierParts(index, store, scan, disk.policy(), disk.admitAfter()), remoteParts, group);
    }

    /**
     * Touches one key under the tier's prefix, waiting for the answer, once the store is
     * connected: an ACL that refuses the tier's keys turns the tier off now, its one line before
     * the engine's first step, not in the middle of a streamed answer (a new user's trial: "remote
     * tier off: the server refused key ..." between a prompt and its generated text). A read, not
     * a SET and DEL: it writes nothing to the store (the SET made a store of a tiny maxmemory
     * refuse later writes with OOM in 7 of 25 runs of RemoteTierTest's eviction test, none since).
     * An ACL that allows reading the keys but not writing them still turns the tier off at the
     * first store. Any other failure is the store's to count and say, as for any command.
     */
    private static void checkKeys(RemoteStore store, RemoteKeys keys, Duration timeout) {
        if (!"closed".equals(store.breakerState())) {
            return; // off or not connected: its open said so
        }
        String probe = keys.prefix() + "probe";
        try {
            store.touch(probe).get(2 * timeout.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            // refused (the store turned itself off and said why) or no answer (its breaker counted it)
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * An exception's message with the operating system's reason: the JDK's {@link java.nio.file.NoSuchFileException}
     * and {@link java.nio.file.AccessDeniedException} carry the path alone ("cannot open (/proc/foo)" said no why).
     */
    static String withReason(Exception e) {
        return switch (e) {
            case java.nio.file.NoSuchFileException n when n.getReason() == null -> n.getMessage() + ": No such file or directory";
            case java.nio.file.AccessDeniedException a when a.getReason() == null -> a.getMessage() + ": Permission denied";
            default -> e.getMessage();
        };
    }
}
