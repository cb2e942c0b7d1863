package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.OffloadSetup;
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
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code ./kvtier generate}: prompts in, text out, through the engine and its caches. */
@Command(name = "generate", mixinStandardHelpOptions = true, defaultValueProvider = GenerateCommand.Defaults.class,
        description = "Generate text for one or more prompts (all submitted at once: continuous batching).")
final class GenerateCommand implements Callable<Integer> {

    @Mixin
    ModelOptions model;

    @Mixin
    TokenizerOptions tokenizer;

    @Option(names = "--prompt", paramLabel = "TEXT", description = "a prompt (repeatable); an empty prompt is BOS alone")
    List<String> prompts = new ArrayList<>();

    @Option(names = "--prompts", paramLabel = "FILE", description = "a file with one prompt a line (- for standard input), all submitted at once")
    Path promptsFile;

    @Mixin
    MaxTokensOptions maxTokens;

    @Mixin
    SamplingOptions sampling;

    @Mixin
    BatchOptions batch;

    @Mixin
    EngineOptions engineOptions;

    @Mixin
    ThreadsOptions threads;

    @Option(names = "--output", defaultValue = "text", paramLabel = "text|jsonl", description = "text (default) or jsonl: one object per prompt in input order")
    OutputFormat output;

    @Mixin
    StatsOptions stats;

    @Mixin
    OffloadOptions offload;

    @Mixin
    EvictionOptions eviction;

    @Mixin
    DiskOptions disk;

    @Mixin
    RemoteOptions remote;

    @Option(names = "--cache-salt", paramLabel = "SALT",
            description = "tenant salt mixed into every block key; one value for all prompts, or one per prompt (repeat)")
    List<String> cacheSalts = new ArrayList<>();

    @Option(names = "--sequential", description = "submit prompts one after another, each after the previous finished")
    boolean sequential;

    @Option(names = "--clear-device-cache-between", description = "with --sequential: drop the device prefix cache between prompts, so reuse must come from the offload tiers")
    boolean clearDeviceCacheBetween;

    /** Defaults of the shared options that differ between commands. */
    static final class Defaults extends FlagDefaults {
        Defaults() {
            super(java.util.Map.of("--max-tokens", "256", "--block-size", "16", "--max-batch-tokens", "512",
                    "--max-running", String.valueOf(EngineConfig.DEFAULT_MAX_RUNNING)));
        }
    }

    enum OutputFormat { text, jsonl }

    @Override
    public Integer call() throws IOException {
        checkFlags();
        List<String> texts = collectPrompts();
        Path modelPath = model.model();
        Path tokPath = tokenizer.tokenizer();
        int maxTokens = this.maxTokens.maxTokens();
        SamplingParams sampling = this.sampling.params();
        if (!cacheSalts.isEmpty() && cacheSalts.size() != 1 && cacheSalts.size() != texts.size()) {
            throw new BadInputException("--cache-salt given " + cacheSalts.size() + " times for " + texts.size()
                    + " prompts: give it once, or once per prompt");
        }
        if (clearDeviceCacheBetween && !sequential) {
            throw new BadInputException("--clear-device-cache-between needs --sequential");
        }
        OffloadSetup offloadSetup = offload.setup(eviction, disk, System.console() != null && System.console().isTerminal());
        OffloadSetup.RemoteSetup remoteSetup = remote.setup();
        if (remoteSetup != null && !offloadSetup.enabled()) {
            throw new BadInputException("--remote-url needs the host tier: the remote tier sits behind it (--host-cache-bytes > 0)");
        }
        offloadSetup = offloadSetup.withRemote(remoteSetup);
        Checkpoint checkpoint = Checkpoint.load(modelPath);
        Tokenizer tok;
        try {
            tok = Tokenizer.load(tokPath, checkpoint.config().vocabSize());
        } catch (RuntimeException e) {
            checkpoint.close();
            throw e;
        }
        if ((long) offload.blocksPerChunk() * batch.blockSize() > checkpoint.config().seqLen()) {
            checkpoint.close();
            throw new BadInputException("--blocks-per-chunk " + offload.blocksPerChunk() + " x --block-size " + batch.blockSize()
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
        EngineConfig config = engineOptions.config(checkpoint, batch, Tokenizer.BOS);
        try (Engine engine = LlamaRunner.engine(checkpoint, config, Kernels.best(), threads.threads(), offloadSetup)) {
            if (engine.offload() != null && !disk.scanWait().isZero()) {
                engine.offload().awaitDiskScan(disk.scanWait());
                if (disk.dir() != null && System.console() != null && System.console().isTerminal()) {
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
            stats.write(List.of(report.stats()), false);
        }
        return 0;
    }

    /** Flag values that are wrong whatever the model: one line, exit 2, before anything is loaded. */
    private void checkFlags() {
        batch.blockSize();
        batch.maxBatchTokens();
        batch.maxRunning();
        engineOptions.check();
        threads.threads();
        offload.check(eviction, disk);
        stats.check();
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
}
