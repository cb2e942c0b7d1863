package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.tier.disk.DiskFsync;
import io.kvtier.engine.Request;
import io.kvtier.engine.SamplingParams;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import io.kvtier.model.Tokenizer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code ./kvtier generate}: prompts in, text out, through the engine and its caches. */
@Command(name = "generate", mixinStandardHelpOptions = true,
        description = "Generate text for one or more prompts (all submitted at once: continuous batching).")
final class GenerateCommand implements Callable<Integer> {

    @Option(names = "--model", paramLabel = "FILE", description = "llama2.c checkpoint (default: ../shared/models/stories260K.bin beside the project root)")
    Path model;

    @Option(names = "--tokenizer", paramLabel = "FILE", description = "llama2.c tokenizer (default: ../shared/models/tok512.bin beside the project root)")
    Path tokenizer;

    @Option(names = "--prompt", paramLabel = "TEXT", description = "a prompt (repeatable); an empty prompt is BOS alone")
    List<String> prompts = new ArrayList<>();

    @Option(names = "--prompts", paramLabel = "FILE", description = "a file with one prompt a line (- for standard input), all submitted at once")
    Path promptsFile;

    @Option(names = "--max-tokens", defaultValue = "256", description = "most new tokens per prompt (default ${DEFAULT-VALUE}); the context limit also stops generation")
    int maxTokens;

    @Option(names = "--temperature", defaultValue = "0", description = "0 = greedy (default); otherwise sample from softmax(logits / T)")
    float temperature;

    @Option(names = "--top-p", defaultValue = "1", description = "nucleus sampling threshold in (0, 1] (default ${DEFAULT-VALUE} = off)")
    float topP;

    @Option(names = "--seed", defaultValue = "42", description = "seed of the sampling streams (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--block-size", defaultValue = "16", description = "token positions per KV block (default ${DEFAULT-VALUE})")
    int blockSize;

    @Option(names = "--device-blocks", defaultValue = "0", description = "blocks in the device KV pool (default 0 = room for 32 full contexts, at most 2 GiB)")
    int deviceBlocks;

    @Option(names = "--max-batch-tokens", defaultValue = "512", description = "token budget of one engine step: decode tokens plus prefill chunks (default ${DEFAULT-VALUE})")
    int maxBatchTokens;

    @Option(names = "--no-prefix-cache", description = "do not reuse device KV blocks of equal prefixes")
    boolean noPrefixCache;

    @Option(names = "--output", defaultValue = "text", paramLabel = "text|jsonl", description = "text (default) or jsonl: one object per prompt in input order")
    OutputFormat output;

    @Option(names = "--stats-json", paramLabel = "FILE", description = "also write the run's summary as JSON")
    Path statsJson;

    @Option(names = "--threads", defaultValue = "0", description = "compute threads (default: one per core)")
    int threads;

    @Option(names = "--host-cache-bytes", defaultValue = "256M", paramLabel = "SIZE",
            description = "host-memory KV tier size, e.g. 256M, 1G (default ${DEFAULT-VALUE}); 0 turns offloading off")
    String hostCacheBytes;

    @Option(names = "--host-cache-chunks", defaultValue = "0", description = "host tier size in chunks instead of --host-cache-bytes")
    int hostCacheChunks;

    @Option(names = "--blocks-per-chunk", defaultValue = "1", description = "device blocks per stored chunk (default ${DEFAULT-VALUE})")
    int blocksPerChunk;

    @Option(names = "--eviction", defaultValue = "lru", paramLabel = "lru|arc", description = "host tier eviction policy: lru (default) or arc")
    String eviction;

    @Option(names = "--cache-salt", paramLabel = "SALT",
            description = "tenant salt mixed into every block key; one value for all prompts, or one per prompt (repeat)")
    List<String> cacheSalts = new ArrayList<>();

    @Option(names = "--offload-decode", description = "store blocks completed during decode too (default: blocks holding prompt tokens)")
    boolean offloadDecode;

    @Option(names = "--sequential", description = "submit prompts one after another, each after the previous finished")
    boolean sequential;

    @Mixin
    RemoteOptions remote;

    @Option(names = "--disk-cache-dir", paramLabel = "DIR",
            description = "put a disk KV tier behind the host tier in DIR (survives restarts; one subdirectory per model namespace)")
    Path diskCacheDir;

    @Option(names = "--disk-cache-bytes", defaultValue = "1G", paramLabel = "SIZE", description = "disk tier budget (default ${DEFAULT-VALUE})")
    String diskCacheBytes;

    @Option(names = "--disk-write-policy", defaultValue = "through", paramLabel = "through|on-evict",
            description = "through (default: after every host store) or on-evict (when the host tier evicts)")
    String diskWritePolicy;

    @Option(names = "--disk-fsync", defaultValue = "none", paramLabel = "none|data|data-and-dir",
            description = "none (default), data (fdatasync before publishing), data-and-dir (and the directory)")
    String diskFsync;

    @Option(names = "--disk-admit-after", defaultValue = "1", description = "write a chunk to disk only from its N-th use (default ${DEFAULT-VALUE})")
    int diskAdmitAfter;

    @Option(names = "--disk-scan-wait", defaultValue = "10", paramLabel = "SECONDS",
            description = "at start, wait up to this long for the disk tier's scan of existing files (default ${DEFAULT-VALUE}; 0: start at once, unscanned chunks are misses)")
    double diskScanWait;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--clear-device-cache-between", description = "with --sequential: drop the device prefix cache between prompts, so reuse must come from the offload tiers")
    boolean clearDeviceCacheBetween;

    enum OutputFormat { text, jsonl }

    @Override
    public Integer call() throws IOException {
        checkFlags();
        List<String> texts = collectPrompts();
        Path modelPath = ModelPaths.resolve(model, ModelPaths.DEFAULT_MODEL, "--model");
        Path tokPath = ModelPaths.resolve(tokenizer, ModelPaths.DEFAULT_TOKENIZER, "--tokenizer");
        if (maxTokens < 1) {
            throw new BadInputException("--max-tokens must be at least 1, got " + maxTokens);
        }
        SamplingParams sampling = new SamplingParams(temperature, topP, seed);
        if (!cacheSalts.isEmpty() && cacheSalts.size() != 1 && cacheSalts.size() != texts.size()) {
            throw new BadInputException("--cache-salt given " + cacheSalts.size() + " times for " + texts.size()
                    + " prompts: give it once, or once per prompt");
        }
        if (clearDeviceCacheBetween && !sequential) {
            throw new BadInputException("--clear-device-cache-between needs --sequential");
        }
        OffloadSetup offloadSetup = offloadSetup();
        Checkpoint checkpoint = Checkpoint.load(modelPath);
        Tokenizer tok;
        try {
            tok = Tokenizer.load(tokPath, checkpoint.config().vocabSize());
        } catch (RuntimeException e) {
            checkpoint.close();
            throw e;
        }
        if ((long) blocksPerChunk * blockSize > checkpoint.config().seqLen()) {
            checkpoint.close();
            throw new BadInputException("--blocks-per-chunk " + blocksPerChunk + " x --block-size " + blockSize
                    + " exceeds the model's context of " + checkpoint.config().seqLen() + " tokens: nothing could be stored");
        }
        List<int[]> ids = new ArrayList<>();
        for (int i = 0; i < texts.size(); i++) {
            int[] p = tok.encode(texts.get(i), true);
            if (p.length > checkpoint.config().seqLen()) {
                checkpoint.close();
                throw new BadInputException("prompt " + (i + 1) + " has " + p.length + " tokens but the model's context is "
                        + checkpoint.config().seqLen() + " tokens");
            }
            ids.add(p);
        }
        EngineConfig config = new EngineConfig(blockSize, deviceBlocks > 0 ? deviceBlocks
                : defaultDeviceBlocks(checkpoint, blockSize), maxBatchTokens, EngineConfig.DEFAULT_MAX_RUNNING,
                !noPrefixCache, Tokenizer.BOS);
        try (Engine engine = LlamaRunner.engine(checkpoint, config, Kernels.best(), threads, offloadSetup)) {
            if (engine.offload() != null && diskScanWait > 0) {
                engine.offload().awaitDiskScan(java.time.Duration.ofMillis((long) (diskScanWait * 1000)));
                if (diskCacheDir != null && System.console() != null && System.console().isTerminal()) {
                    System.err.println(); // end the scan's progress line
                }
            }
            long t0 = System.nanoTime();
            List<Request> requests = new ArrayList<>();
            for (int i = 0; i < ids.size(); i++) {
                String salt = cacheSalts.isEmpty() ? null : cacheSalts.get(cacheSalts.size() == 1 ? 0 : i);
                Request r = new Request(i, ids.get(i), maxTokens, sampling, ExtraKeys.salt(salt));
                if (sequential && i > 0) {
                    if (clearDeviceCacheBetween) {
                        engine.resetDevicePrefixCache();
                    }
                }
                try {
                    engine.submit(r);
                } catch (IllegalArgumentException e) {
                    throw new BadInputException("prompt " + (i + 1) + ": " + e.getMessage(), e);
                }
                requests.add(r);
                if (sequential) {
                    engine.runToCompletion();
                    engine.drainTransfers(); // its stores are readable before the next prompt looks
                }
            }
            engine.runToCompletion();
            engine.drainTransfers();
            double wall = (System.nanoTime() - t0) / 1e9;
            PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
            GenerateReport report = new GenerateReport(engine, requests, texts, tok, wall);
            if (output == OutputFormat.jsonl) {
                report.writeJsonl(out);
            } else {
                report.writeText(out);
            }
            out.flush();
            report.writeSummary(System.err);
            if (statsJson != null) {
                report.writeStatsJson(statsJson);
            }
        }
        return 0;
    }

    /** Flag values that are wrong whatever the model: one line, exit 2, before anything is loaded. */
    private void checkFlags() {
        Checks.atLeast(blockSize, 1, "--block-size");
        Checks.atLeast(deviceBlocks, 0, "--device-blocks");
        Checks.atLeast(maxBatchTokens, 1, "--max-batch-tokens");
        Checks.atLeast(threads, 0, "--threads");
        Checks.atLeast(hostCacheChunks, 0, "--host-cache-chunks");
        Checks.atLeast(blocksPerChunk, 1, "--blocks-per-chunk");
        Checks.atLeast(diskAdmitAfter, 1, "--disk-admit-after");
        if (!(diskScanWait >= 0)) {
            throw new BadInputException("--disk-scan-wait must be >= 0 seconds, got " + diskScanWait);
        }
        var parsed = spec.commandLine().getParseResult();
        if (hostCacheChunks > 0 && parsed.hasMatchedOption("--host-cache-bytes")) {
            throw new BadInputException("give --host-cache-bytes or --host-cache-chunks, not both");
        }
        if (diskCacheDir == null) {
            for (String flag : List.of("--disk-cache-bytes", "--disk-write-policy", "--disk-fsync", "--disk-admit-after")) {
                if (parsed.hasMatchedOption(flag)) {
                    throw new BadInputException(flag + " needs --disk-cache-dir");
                }
            }
        } else {
            Checks.directory(diskCacheDir, "--disk-cache-dir");
        }
        Checks.outputFile(statsJson, "--stats-json");
    }

    private List<String> collectPrompts() throws IOException {
        List<String> all = new ArrayList<>(prompts);
        if (promptsFile != null) {
            List<String> lines = promptsFile.toString().equals("-")
                    ? new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8)).lines().toList()
                    : Files.readAllLines(Checks.inputFile(promptsFile, "--prompts"), StandardCharsets.UTF_8);
            if (lines.isEmpty()) {
                throw new BadInputException("--prompts " + promptsFile + ": the file is empty (one prompt a line expected)");
            }
            all.addAll(lines);
        }
        if (all.isEmpty()) {
            all.add("");
        }
        return all;
    }

    private OffloadSetup offloadSetup() {
        long bytes = Sizes.parseBytes(hostCacheBytes, "--host-cache-bytes");
        if (hostCacheChunks < 0) {
            throw new BadInputException("--host-cache-chunks must not be negative, got " + hostCacheChunks);
        }
        if (blocksPerChunk < 1) {
            throw new BadInputException("--blocks-per-chunk must be at least 1, got " + blocksPerChunk);
        }
        if (!eviction.equals("lru") && !eviction.equals("arc")) {
            throw new BadInputException("--eviction must be lru or arc, got '" + eviction + "'");
        }
        OffloadConfig oc = OffloadConfig.DEFAULT.withBlocksPerChunk(blocksPerChunk).withOffloadPromptOnly(!offloadDecode);
        if (bytes == 0 && hostCacheChunks == 0 && diskCacheDir != null) {
            throw new BadInputException("--disk-cache-dir needs the host tier: the disk tier sits behind it (--host-cache-bytes > 0)");
        }
        OffloadSetup.DiskSetup disk = null;
        if (diskCacheDir != null) {
            DiskWritePolicy policy;
            DiskFsync fsync;
            try {
                policy = DiskWritePolicy.parse(diskWritePolicy);
                fsync = DiskFsync.parse(diskFsync);
            } catch (IllegalArgumentException e) {
                throw new BadInputException(e.getMessage());
            }
            boolean terminal = System.console() != null && System.console().isTerminal();
            disk = new OffloadSetup.DiskSetup(diskCacheDir, Sizes.parseBytes(diskCacheBytes, "--disk-cache-bytes"), policy,
                    fsync, diskAdmitAfter, terminal ? p -> System.err.print("\r" + p.line()) : null);
        }
        OffloadSetup.RemoteSetup remoteSetup = remote.setup();
        if (bytes == 0 && hostCacheChunks == 0 && remoteSetup != null) {
            throw new BadInputException("--remote-url needs the host tier: the remote tier sits behind it (--host-cache-bytes > 0)");
        }
        return new OffloadSetup(hostCacheChunks > 0 ? 0 : bytes, hostCacheChunks, eviction, oc, disk).withRemote(remoteSetup);
    }

    /** Room for 32 full contexts, capped at 2 GiB of KV. */
    static int defaultDeviceBlocks(Checkpoint checkpoint, int blockSize) {
        var layout = checkpoint.config().kvLayout(blockSize);
        long want = 32L * layout.blocksFor(checkpoint.config().seqLen());
        long cap = (2L << 30) / layout.bytesPerBlock();
        return (int) Math.max(1, Math.min(want, cap));
    }
}
