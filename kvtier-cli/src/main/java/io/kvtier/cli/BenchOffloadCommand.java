package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.engine.Request;
import io.kvtier.engine.SamplingParams;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Model;
import io.kvtier.model.Models;
import io.kvtier.model.CheckpointWriter;
import io.kvtier.model.Kernels;
import io.kvtier.model.ModelConfig;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.text.Plural;
import io.kvtier.tier.disk.FileTrees;
import io.kvtier.bench.CopyBandwidth;
import io.kvtier.bench.ColdDiskBandwidth;
import io.kvtier.bench.DiskBandwidth;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ./kvtier bench offload}: the host tier's costs, each beside its floor measured in the
 * same run: store/load bandwidth against a plain {@code MemorySegment.copy}; decode throughput
 * with offloading (decode blocks stored too) against without; time to first token of a prompt
 * whose prefix is loaded from the host tier against recomputing it, on a ~110M-parameter random
 * checkpoint.
 */
@Command(name = "offload", mixinStandardHelpOptions = true,
        description = "Host- and disk-tier bandwidth, decode overhead of offloading, TTFT with a host or disk hit vs recompute.")
final class BenchOffloadCommand implements Callable<Integer> {

    /** Chunk sizes of {@code --cold-disk}: the sizes the disk-tier targets are about. */
    private static final long[] COLD_CHUNK_SIZES = {256 << 10, 1 << 20, 4 << 20};

    /** Token positions per block of the TTFT figures' engines. */
    private static final int TTFT_BLOCK_SIZE = 16;

    /** Most {@code --seconds-per-size}: an hour a chunk size. */
    static final Duration MAX_SECONDS_PER_SIZE = Duration.ofHours(1);

    /**
     * Most {@code --remote-mib-per-size}: 64 GiB a chunk size, a fixed cap as {@code --seconds-per-size}'s
     * hour. The server holds no more for a larger value (the tier's side overwrites its
     * {@link RemoteBandwidth#TIER_KEYS} keys), so neither memory nor disk bounds it; but every round
     * moves it four times, and a typo such as 99999999999 ran for ever (or, beyond 2^43, overflowed).
     */
    static final long MAX_REMOTE_MIB_PER_SIZE = 64 << 10;

    /**
     * Most {@code --disk-mib-per-size}: 4 TiB, where a larger value writes no more files (a side
     * writes at most 2^20 files of a size, 4 TiB of the largest, 4 MiB). The filesystem's room
     * ({@link BenchDiskRoom}) bounds it below that; but 2^44 overflowed to 0 bytes and passed it,
     * running 4 files a size.
     */
    static final long MAX_DISK_MIB_PER_SIZE = 4L << 20;

    /** A signal's shutdown hook has interrupted the bench: its failures are the interrupt's, not errors. */
    private volatile boolean signalled;

    /** Samples of the floor's compute step per repeat, the best kept. */
    private static final int FLOOR_STEP_SAMPLES = 5;
    /**
     * Measured recomputes of a TTFT figure at least: the recompute is the ratios' numerator, so one
     * slow prefill (--repeats 1) inflated every "faster than recompute" of the run (a new user's trial).
     */
    private static final int MIN_RECOMPUTE_SAMPLES = 2;

    /** The 110M shape of the issue: dim 768, 12 layers, 12 heads, hidden 2048, vocab 32000, seq 1024. */
    static final ModelConfig SHAPE_110M = new ModelConfig(768, 2048, 12, 12, 12, 32000, 1024, true);

    @Mixin
    ModelOptions model;

    @Option(names = "--ttft-model", paramLabel = "FILE",
            description = "model for the TTFT figures (default: a random 110M checkpoint, written once to the temp dir)")
    Path ttftModel;

    @Option(names = "--prompt-tokens", converter = TokenCount.class, paramLabel = "N", defaultValue = "1000", description = "TTFT prompt length (default ${DEFAULT-VALUE})")
    int promptTokens;

    @Option(names = "--seconds-per-size", paramLabel = "TIME", defaultValue = "0.5", converter = TimeFlag.Seconds.class,
            description = "bandwidth measuring time per chunk size, e.g. 0.5 or 500ms (a plain number is seconds; default ${DEFAULT-VALUE})")
    Duration secondsPerSize;

    @Option(names = "--repeats", paramLabel = "N", defaultValue = "3", description = "TTFT runs after a warm-up, the best reported (remote TTFT pairs: the medians and the median of the pairs' ratios); on/off decode pairs, the median reported; rounds of the remote throughput (--remote-url), the median reported, at most 1000 (default ${DEFAULT-VALUE}; 5 for the issue's decode target)")
    @Most(MAX_REPEATS)
    int repeats;

    /**
     * The most --repeats: each repeat is a TTFT run of every tier and a decode pair of every batch size,
     * seconds each, so 1000 is hours; 2147483647 (int's most) failed sizing its arrays of pairs.
     */
    static final int MAX_REPEATS = 1000;

    @Mixin
    ThreadsOptions threads;

    @Option(names = "--skip-ttft", description = "skip the TTFT figures (they write and load a 440 MB checkpoint)")
    boolean skipTtft;

    @Option(names = "--skip-decode", description = "skip the decode-with-offloading figures (on/off pairs at 1 and 32 sequences)")
    boolean skipDecode;

    @Option(names = "--skip-bandwidth", description = "skip the host- and disk-tier bandwidth tables (--cold-disk still runs if given)")
    boolean skipBandwidth;

    @Option(names = "--disk-cache-dir", paramLabel = "DIR",
            description = "where the disk-tier figures put the disk tier and their files (default: a fresh temp dir, deleted after)")
    Path diskDir;

    /** With {@code --remote-url}: also the remote tier's throughput beside redis-benchmark, and its TTFT. */
    @Mixin
    RemoteConnectionOptions remote;
    /** The store of {@code --remote-url} and what the run writes there, once the flags are checked; null: none. */
    private volatile RemoteBenchRun remoteRun;

    @Option(names = "--remote-mib-per-size", paramLabel = "MIB", defaultValue = "64", description = "MiB stored and loaded per chunk size on the remote server, at most 65536 (default ${DEFAULT-VALUE})")
    @Most(MAX_REMOTE_MIB_PER_SIZE)
    long remoteMibPerSize;

    @Option(names = "--remote-requests", paramLabel = "N", defaultValue = "256", description = "values stored and loaded per "
            + "chunk size on the remote server, by the tier and by redis-benchmark: at least N and --remote-mib-per-size, "
            + "rounded up to a multiple of 8, and more until each side's run takes 0.2 s (default ${DEFAULT-VALUE})")
    int remoteRequests;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    private final FormerNames former = new FormerNames();

    // Former spelling, kept for one release (FlagVocabulary.FORMER_NAMES).
    @Option(names = "--disk-dir", hidden = true, description = "deprecated: --disk-cache-dir")
    void diskDir(Path v) {
        former.use("--disk-dir", () -> diskDir = v);
    }

    @Option(names = "--disk-mib-per-size", paramLabel = "MIB", defaultValue = "128", description = "MiB written and read per chunk size, at most 4194304 (default ${DEFAULT-VALUE})")
    @Most(MAX_DISK_MIB_PER_SIZE)
    long diskMibPerSize;

    @Option(names = "--cold-disk", description = "also read the disk-tier files with the page cache dropped before "
            + "each side (needs root; chunks of 256 KiB, 1 MiB and 4 MiB)")
    boolean coldDisk;

    @Override
    public Integer call() throws java.io.IOException {
        former.apply(spec);
        if (promptTokens < TTFT_BLOCK_SIZE + 1) {
            // 2 to 16 left no block to store: "the TTFT runs did not hit both tiers", an internal error.
            throw new BadInputException("--prompt-tokens must be at least " + (TTFT_BLOCK_SIZE + 1) + " (a block of "
                    + TTFT_BLOCK_SIZE + " tokens for the tiers to hold, and a token to compute), got " + promptTokens);
        }
        Checks.atLeast(repeats, 1, "--repeats");
        Checks.atMost(repeats, MAX_REPEATS, "--repeats", "each repeat runs every TTFT and decode figure again, seconds each");
        threads.threads();
        // At most an hour: 1e308 overflowed Duration.toNanos after the header, an internal error, not a refusal.
        TimeFlag.inRange(spec, "--seconds-per-size", secondsPerSize, Duration.ofMillis(1), MAX_SECONDS_PER_SIZE);
        Checks.atLeast(diskMibPerSize, 1, "--disk-mib-per-size");
        Checks.atMost(diskMibPerSize, MAX_DISK_MIB_PER_SIZE, "--disk-mib-per-size", "4 TiB: a side writes at most 2^20 files "
                + "of a size, 4 TiB of 4 MiB chunks");
        Checks.notWith(spec, skipTtft, "--skip-ttft", "the TTFT figures are skipped", List.of("--ttft-model", "--prompt-tokens"));
        // A flag of a skipped part is refused, not ignored: the figures it was meant to change are not printed.
        Checks.notWith(spec, skipBandwidth, "--skip-bandwidth", "the bandwidth tables are skipped", List.of("--seconds-per-size"));
        Checks.notWith(spec, skipBandwidth && !coldDisk, "--skip-bandwidth", "the bandwidth tables are skipped "
                + "(only --cold-disk would still use it)", List.of("--disk-mib-per-size"));
        Checks.notWith(spec, skipBandwidth && skipTtft && !coldDisk, "--skip-bandwidth --skip-ttft",
                "no figure left writes files (only --cold-disk would)", List.of("--disk-cache-dir", "--disk-dir"));
        Checks.notWith(spec, skipDecode, "--skip-decode", "the decode figures are skipped", List.of("--model"));
        if (skipTtft && skipDecode && skipBandwidth && !coldDisk && !remote.enabled()) {
            // Nothing would be measured: a run that printed nothing and exited 0 (a new user's trial).
            throw new BadInputException("--skip-bandwidth, --skip-decode and --skip-ttft skip every figure: leave one out, "
                    + "or give --remote-url or --cold-disk");
        }
        List<String> needUrl = new java.util.ArrayList<>(List.of("--remote-mib-per-size", "--remote-requests"));
        needUrl.addAll(RemoteConnectionOptions.NEED_URL);
        Checks.needs(spec, remote.enabled(), "--remote-url", needUrl.toArray(String[]::new));
        Checks.atLeast(remoteMibPerSize, 1, "--remote-mib-per-size");
        Checks.atMost(remoteMibPerSize, MAX_REMOTE_MIB_PER_SIZE, "--remote-mib-per-size", "64 GiB a chunk size, which each round "
                + "moves four times: the tier's store and load, redis-benchmark's SET and GET");
        Checks.atLeast(remoteRequests, 1, "--remote-requests");
        // Every model is opened (and closed) now: a wrong file fails in a second, not after the host-tier part.
        ModelOptions.check(model.model(), "--model");
        ModelConfig ttftShape = SHAPE_110M;
        if (ttftModel != null) {
            try (Model m = ModelOptions.load(ttftModel, "--ttft-model")) {
                ttftShape = m.config();
            }
        }
        if (!skipTtft && promptTokens > ttftShape.seqLen() - 1) {
            // It was cut to the context silently: "--prompt-tokens 5000" measured a 1023-token prompt.
            throw new BadInputException("--prompt-tokens " + promptTokens + " does not fit the TTFT model's context of "
                    + ttftShape.seqLen() + " tokens: give at most " + (ttftShape.seqLen() - 1) + " (the prompt and the token "
                    + "its last position samples)");
        }
        if (diskDir != null) {
            Checks.directory(diskDir, "--disk-cache-dir");
        }
        if (coldDisk && !Files.isWritable(Path.of("/proc/sys/vm/drop_caches"))) {
            throw new BadInputException("--cold-disk drops the page cache, which needs root (/proc/sys/vm/drop_caches "
                    + "is not writable here)");
        }
        RemoteBenchRun run = remote.enabled() ? new RemoteBenchRun(remote.settings("bench"), remote.passwordSource()) : null;
        Path tmp = diskDir != null ? diskDir : Files.createTempDirectory("kvtier-bench-disk");
        // A signal (SIGINT, SIGTERM) ends the JVM without running the finally below, and the bench
        // thread runs on while hooks do: deleting behind its back lost the race twice in CI (a
        // figure's createDirectories made the dir again after the hook's last rmdir). So the hook
        // first stops the bench thread (an interrupt fails its file I/O and sleeps at once; the
        // remote figures stop at their next step, redis-benchmark is killed), deletes the remote
        // keys once no figure writes them, waits until the thread's finally has deleted the dir and
        // it can make no more, then deletes what is left.
        Thread bench = Thread.currentThread();
        CountDownLatch benchDone = new CountDownLatch(1);
        Thread cleanup = new Thread(() -> {
            signalled = true;
            stopThenDelete(bench, benchDone, diskDir == null ? tmp : null, run);
        }, "kvtier-bench-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            BenchDiskRoom.check(tmp, diskDir != null, diskRoomNeeded(), diskMibPerSize, skipTtft ? 0 : ttftDiskBytes(ttftShape));
            if (run != null) {
                RemoteBandwidth.checkReachable(run); // before the first figure: a refusal is one line, nothing above it
                remoteRun = run;
            }
            if (!skipBandwidth) {
                bandwidth();
                diskBandwidth(tmp.resolve("bandwidth"));
            }
            if (coldDisk) {
                coldDiskBandwidth(tmp.resolve("cold"));
            }
            if (remoteRun != null) {
                RemoteBandwidth.print(remoteRun, remoteRequests, remoteMibPerSize << 20, repeats);
            }
            if (!skipDecode) {
                new io.kvtier.bench.OffloadDecodeBench(model.model(), threads.threads(), repeats, System.out).run();
            }
            if (!skipTtft) {
                ttft(tmp.resolve("ttft"));
            }
        } catch (Exception e) {
            if (signalled) {
                return 143; // the hook's interrupt, not a failure (the JVM exits with the signal's status anyway)
            }
            throw e;
        } finally {
            try {
                if (diskDir == null) {
                    FileTrees.delete(tmp);
                }
            } finally {
                benchDone.countDown(); // this thread makes no more files: the hook may delete
            }
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs (or ran) anyway
            }
        }
        return 0;
    }

    /** The most bytes of files the disk bandwidth figures that run hold at once (0: none runs). */
    private long diskRoomNeeded() {
        long bytesPerSize = diskMibPerSize << 20;
        return Math.max(skipBandwidth ? 0 : DiskBandwidth.peakFileBytes(DiskBandwidth.DEFAULT_CHUNK_SIZES, bytesPerSize),
                coldDisk ? DiskBandwidth.peakFileBytes(COLD_CHUNK_SIZES, bytesPerSize) : 0);
    }

    /** The TTFT figures' disk tier's chunk files: one a block of the prompt's prefix ({@link #ttft}). */
    private long ttftDiskBytes(ModelConfig c) {
        int prefixBlocks = (promptTokens - 1) / TTFT_BLOCK_SIZE;
        return prefixBlocks * io.kvtier.tier.disk.DiskCapacity.allocatedBytes(c.kvLayout(TTFT_BLOCK_SIZE).bytesPerBlock(),
                TTFT_BLOCK_SIZE, io.kvtier.tier.disk.DiskCapacity.DEFAULT_ALLOCATION_UNIT);
    }

    private void coldDiskBandwidth(Path dir) throws java.io.IOException {
        System.out.println("== disk tier reads from the device (GB/s; page cache dropped before each side, two passes) "
                + "vs plain FileChannel ==");
        String table = inOwnDir(dir, () -> ColdDiskBandwidth.table(ColdDiskBandwidth.measure(dir, COLD_CHUNK_SIZES,
                diskMibPerSize << 20, ColdDiskBandwidth::dropPageCache)));
        System.out.print(table);
    }

    private void diskBandwidth(Path dir) throws java.io.IOException {
        System.out.println("== disk tier bandwidth (GB/s; mean file time, slowest 2% left out; page cache, --disk-fsync none on both sides) vs plain FileChannel ==");
        String table = inOwnDir(dir, () -> DiskBandwidth.table(DiskBandwidth.measure(dir,
                DiskBandwidth.DEFAULT_CHUNK_SIZES, diskMibPerSize << 20, 3)));
        System.out.print(table);
    }

    /** A figure measured in a directory of its own. */
    interface DirFigure {
        String measure() throws java.io.IOException;
    }

    /**
     * Runs {@code figure} in {@code dir}, made for it when absent and removed again after it when
     * left empty (the figure deletes its files): in a {@code --disk-cache-dir} of the user's the
     * bench left an empty {@code bandwidth} directory behind (a new user's trial). A directory that
     * was there before stays.
     */
    static String inOwnDir(Path dir, DirFigure figure) throws java.io.IOException {
        boolean made = !Files.exists(dir);
        Files.createDirectories(dir);
        try {
            return figure.measure();
        } finally {
            if (made) {
                try {
                    Files.deleteIfExists(dir);
                } catch (java.nio.file.DirectoryNotEmptyException left) {
                    // files the figure did not delete: not the bench's to guess about, they stay
                }
            }
        }
    }

    /**
     * A shutdown hook's job: interrupts the bench thread; with a store, stops the remote figures
     * first and deletes what the run wrote there, saying so in one line ({@link RemoteBenchRun#remove});
     * waits at most 5 s for the thread to leave its temp dir (a CPU-bound figure does not see the
     * interrupt), then deletes {@code root} (null: the user's dir, left), again until it has
     * stayed absent for 100 ms in case the bench thread had not stopped.
     */
    private static void stopThenDelete(Thread bench, CountDownLatch benchDone, Path root, RemoteBenchRun remote) {
        try {
            if (remote != null) {
                remote.stop();
            }
            bench.interrupt();
            if (remote != null) {
                String removed = remote.remove(StopSignals.GRACE_SECONDS);
                if (removed != null) {
                    System.err.println("kvtier: " + removed);
                }
            }
            benchDone.await(5, TimeUnit.SECONDS);
            if (root == null) {
                return;
            }
            long end = System.nanoTime() + 5_000_000_000L;
            int goneChecks = 0;
            while (goneChecks < 5 && System.nanoTime() < end) {
                goneChecks = FileTrees.deleteQuietly(root) ? goneChecks + 1 : 0;
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void bandwidth() {
        System.out.println("== host tier bandwidth (GB/s; store/load include the CRC32C and header) ==");
        List<CopyBandwidth.Point> points = CopyBandwidth.measure(CopyBandwidth.DEFAULT_CHUNK_BYTES, 128L << 20,
                secondsPerSize);
        System.out.print(CopyBandwidth.table(points));
    }

    private void ttft(Path diskRoot) {
        Path m = ttftModel != null ? ttftModel : randomModel();
        Model cp = Models.load(m);
        ModelConfig c = cp.config();
        int[] prompt = ttftPrompt(c, promptTokens);
        int len = prompt.length;
        int blockSize = TTFT_BLOCK_SIZE;
        var layout = c.kvLayout(blockSize);
        int prefixBlocks = (len - 1) / blockSize;
        long prefixBytes = prefixBlocks * layout.bytesPerBlock();
        System.out.printf("== time to first token, %d-token prompt, %s (%,d parameters), prefix %s = %.1f MB of KV ==%n",
                len, m.getFileName(), c.parameterCount(), Plural.count(prefixBlocks * blockSize, "token"), prefixBytes / 1e6);
        EngineConfig config = new EngineConfig(blockSize, 2 * layout.blocksFor(c.seqLen()), 4096, 4, true, -1);
        OffloadSetup setup = new OffloadSetup(prefixBytes * 2 + (64L << 20), 0, "lru", OffloadConfig.DEFAULT,
                new OffloadSetup.DiskSetup(diskRoot, prefixBytes * 2 + (64L << 20), io.kvtier.offload.DiskWritePolicy.THROUGH,
                        io.kvtier.tier.disk.DiskFsync.NONE, 1, null));
        double recompute = Double.MAX_VALUE;
        double fromHost = Double.MAX_VALUE;
        double fromDisk = Double.MAX_VALUE;
        double oneStep = Double.MAX_VALUE;
        long id = 0;
        try (Engine e = LlamaRunner.engine(cp, config, Kernels.best(), threads.threads(), setup)) {
            for (int i = 0; i < repeats + 1; i++) {
                int samples = recomputeSamples(i);
                double r = recompute(e, id, prompt, samples); // the prompt's blocks are now in the host tier and on disk
                id += samples;
                e.resetDevicePrefixCache();
                double h = timeFirstToken(e, id++, prompt);
                // One step computing the tokens after the prefix, the prefix on the device: the compute floor.
                // A floor is a lower bound, so it takes the best of several steps: one sample per repeat
                // (--repeats 1) let a single slow step put the floor above the time it bounds.
                double s = Double.MAX_VALUE;
                for (int k = 0; k < FLOOR_STEP_SAMPLES; k++) {
                    s = Math.min(s, timeFirstToken(e, id++, prompt));
                }
                e.drainTransfers();
                e.resetDevicePrefixCache();
                // Cold host tiers (every KV group's): the prefix must come from disk.
                io.kvtier.offload.GroupStats.schedulers(e.offload()).forEach(g -> g.host().index().clear());
                double d = timeFirstToken(e, id++, prompt);
                e.drainTransfers();
                if (i > 0) {
                    recompute = Math.min(recompute, r);
                    fromHost = Math.min(fromHost, h);
                    oneStep = Math.min(oneStep, s);
                    fromDisk = Math.min(fromDisk, d);
                }
            }
            var hits = e.offload().stats().externalHitTokens();
            if (hits.getOrDefault("host", 0L) == 0 || hits.getOrDefault("disk", 0L) == 0) {
                throw new IllegalStateException("bench offload: the TTFT runs did not hit both tiers: " + hits);
            }
        }
        double copySeconds = plainCopySeconds(prefixBytes);
        double readSeconds = plainReadSeconds(diskRoot.resolveSibling("plain-read"), prefixBytes);
        System.out.printf("recompute:            %8.2f ms%n", recompute * 1e3);
        System.out.printf("prefix from host:     %8.2f ms  (%.1fx faster than recompute)%n", fromHost * 1e3, recompute / fromHost);
        System.out.printf("  floor:              %8.2f ms  (plain copy of the prefix %.2f ms + the step after it %.2f ms); host/floor %.2f%n",
                (copySeconds + oneStep) * 1e3, copySeconds * 1e3, oneStep * 1e3, fromHost / (copySeconds + oneStep));
        System.out.printf("prefix from disk:     %8.2f ms  (%.1fx faster than recompute; cold host tier, files in the page cache)%n",
                fromDisk * 1e3, recompute / fromDisk);
        System.out.printf("  floor:              %8.2f ms  (plain FileChannel read of the prefix %.2f ms + the step after it %.2f ms); disk/floor %.2f%n",
                (readSeconds + oneStep) * 1e3, readSeconds * 1e3, oneStep * 1e3, fromDisk / (readSeconds + oneStep));
        if (remoteRun != null) {
            RemoteTtft.print(Models.load(m), remoteRun, prompt, prefixBytes, repeats, threads.threads());
        }
        halfHostTtft(m, prompt, prefixBlocks / 2);
    }

    /** The TTFT figures' prompt: BOS, then a fixed spread of token ids; at most {@code tokens}, shorter than the context. */
    static int[] ttftPrompt(ModelConfig c, int tokens) {
        int len = Math.min(tokens, c.seqLen() - 1);
        int[] prompt = new int[len];
        prompt[0] = 1;
        for (int i = 1; i < len; i++) {
            prompt[i] = 3 + (int) ((i * 2654435761L) % (c.vocabSize() - 3));
        }
        return prompt;
    }

    /**
     * Full prefills to time in repeat {@code i} (0: the warm-up): one per repeat, more in each
     * measured one when --repeats is below {@link #MIN_RECOMPUTE_SAMPLES}; the best is the recompute.
     */
    private int recomputeSamples(int i) {
        return i == 0 ? 1 : Math.max(1, MIN_RECOMPUTE_SAMPLES - repeats + 1);
    }

    /**
     * The best TTFT of {@code samples} full prefills of {@code prompt} (request ids from
     * {@code firstId}), nothing cached anywhere before each; the transfers are drained after each,
     * so its stores have ended before the next reset (a key whose store is in flight at a reset
     * cannot be stored again until it ends).
     */
    private static double recompute(Engine e, long firstId, int[] prompt, int samples) {
        double best = Double.MAX_VALUE;
        for (int k = 0; k < samples; k++) {
            e.resetCache();
            best = Math.min(best, timeFirstToken(e, firstId + k, prompt));
            e.drainTransfers();
        }
        return best;
    }

    /**
     * TTFT of the prompt with a host tier of half its prefix's chunks (the prompt is twice as long
     * as the host tier holds): the fitting half is stored, then loaded, and the rest recomputed.
     */
    private void halfHostTtft(Path m, int[] prompt, int hostChunks) {
        if (hostChunks < 1) {
            return;
        }
        Model cp = Models.load(m);
        EngineConfig config = new EngineConfig(16, 2 * cp.config().kvLayout(16).blocksFor(cp.config().seqLen()), 4096, 4, true, -1);
        double best = Double.MAX_VALUE;
        double full = Double.MAX_VALUE; // the recompute, interleaved with the hit in this engine
        long id = 0;
        long hit = 0;
        try (Engine e = LlamaRunner.engine(cp, config, Kernels.best(), threads.threads(),
                new OffloadSetup(0, hostChunks, "lru", OffloadConfig.DEFAULT))) {
            for (int i = 0; i < repeats + 1; i++) {
                int samples = recomputeSamples(i);
                double r = recompute(e, id, prompt, samples); // the first hostChunks chunks are now in the host tier
                id += samples;
                e.resetDevicePrefixCache();
                long before = e.offload().stats().externalHitTokensTotal();
                double h = timeFirstToken(e, id++, prompt);
                hit = e.offload().stats().externalHitTokensTotal() - before;
                e.drainTransfers();
                if (i > 0) {
                    best = Math.min(best, h);
                    full = Math.min(full, r);
                }
            }
        }
        if (hit < hostChunks * 16L) {
            throw new IllegalStateException("bench offload: a host tier of " + Plural.count(hostChunks, "chunk") + " gave a hit of "
                    + Plural.count(hit, "token") + ", expected " + hostChunks * 16);
        }
        System.out.printf("half prefix from host:%8.2f ms  (%.2fx faster than recompute, %.2f ms in this engine; host tier "
                + "of %s = half the prefix, %s loaded, %d recomputed)%n", best * 1e3, full / best, full * 1e3,
                Plural.count(hostChunks, "chunk"), Plural.count(hit, "token"), prompt.length - hit);
    }

    /** Best time of a plain sequential FileChannel read of {@code bytes} from one file, into off-heap memory. */
    private static double plainReadSeconds(Path file, long bytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(bytes, 4096);
            buf.fill((byte) 3);
            Files.createDirectories(file.getParent());
            try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.WRITE, java.nio.file.StandardOpenOption.READ)) {
                ch.write(buf.asByteBuffer(), 0);
                double best = Double.MAX_VALUE;
                for (int i = 0; i < 5; i++) {
                    var bb = buf.asByteBuffer();
                    long t0 = System.nanoTime();
                    long pos = 0;
                    while (bb.hasRemaining()) {
                        pos += ch.read(bb, pos);
                    }
                    best = Math.min(best, (System.nanoTime() - t0) / 1e9);
                }
                return best;
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Seconds from submission to the first generated token of one request (max 1 token). */
    private static double timeFirstToken(Engine e, long id, int[] prompt) {
        long t0 = System.nanoTime();
        e.submit(new Request(id, prompt, 1, SamplingParams.GREEDY, ExtraKeys.NONE));
        e.runToCompletion();
        return (System.nanoTime() - t0) / 1e9;
    }

    /** Best time of a plain MemorySegment.copy of {@code bytes} between two fresh off-heap buffers. */
    private static double plainCopySeconds(long bytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(bytes, 64);
            MemorySegment b = arena.allocate(bytes, 64);
            a.fill((byte) 1);
            b.fill((byte) 2);
            double best = Double.MAX_VALUE;
            for (int i = 0; i < 7; i++) {
                long t0 = System.nanoTime();
                MemorySegment.copy(a, 0, b, 0, bytes);
                best = Math.min(best, (System.nanoTime() - t0) / 1e9);
            }
            return best;
        }
    }

    private static Path randomModel() {
        Path p = Path.of(System.getProperty("java.io.tmpdir"), "kvtier-bench-110M-seed1.bin");
        long expected = 4L * SHAPE_110M.parameterCount();
        try {
            if (!Files.isRegularFile(p) || Files.size(p) < expected) {
                System.out.println("writing a random 110M checkpoint to " + p + " ...");
                CheckpointWriter.writeRandom(p, SHAPE_110M, 1);
            }
        } catch (java.io.IOException e) {
            throw new BadInputException("cannot write the benchmark checkpoint " + p + ": " + e.getMessage(), e);
        }
        return p;
    }
}
