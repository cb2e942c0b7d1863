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
import io.kvtier.model.Kernels;
import io.kvtier.model.TextTokenizer;
import io.kvtier.model.Tokenizer;
import io.kvtier.model.chat.ChatTemplate;
import io.kvtier.model.gguf.GgufModel;
import io.kvtier.model.tokenizer.GgufTokenizer;
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

    @Option(names = "--chat", description = "each prompt is a user message rendered through the model's chat template"
            + " (a GGUF file's tokenizer.chat_template, else a plain one); the reply ends at EOS or an end-of-turn token")
    boolean chat;

    @Option(names = "--system", paramLabel = "TEXT", description = "with --chat: a system message before each prompt")
    String system;

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
        Model checkpoint = Models.load(modelPath);
        TextTokenizer tok;
        try {
            tok = tokenizerFor(checkpoint);
        } catch (RuntimeException e) {
            checkpoint.close();
            throw e;
        }
        if ((long) offload.blocksPerChunk() * batch.blockSize() > checkpoint.config().seqLen()) {
            checkpoint.close();
            throw new BadInputException("--blocks-per-chunk " + offload.blocksPerChunk() + " x --block-size " + batch.blockSize()
                    + " exceeds the model's context of " + checkpoint.config().seqLen() + " tokens: nothing could be stored");
        }
        ChatTemplate template = chat ? ChatPrompts.template(checkpoint, tok) : null;
        List<int[]> ids = new ArrayList<>();
        for (int i = 0; i < texts.size(); i++) {
            int[] p;
            try {
                p = template != null ? ChatPrompts.encode(template, tok, system, texts.get(i)) : tok.encode(texts.get(i), true, true);
            } catch (RuntimeException e) {
                checkpoint.close();
                throw e;
            }
            if (p.length > checkpoint.config().seqLen()) {
                checkpoint.close();
                throw new BadInputException("prompt " + (i + 1) + " has " + p.length + " tokens but the model's context is "
                        + checkpoint.config().seqLen() + " tokens");
            }
            ids.add(p);
        }
        EngineConfig config = engineOptions.config(checkpoint, batch, -1)
                .withStopTokens(template != null ? template.stopTokenIds() : tok.stopTokenIds());
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
        if (system != null && !chat) {
            throw new BadInputException("--system needs --chat");
        }
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

    /**
     * A GGUF model's own tokenizer (from its metadata), or the llama2.c tokenizer of
     * {@code --tokenizer} for a checkpoint.
     *
     * @throws BadInputException for {@code --tokenizer} with a GGUF model, or a vocabulary that
     *         does not fit the model
     */
    private TextTokenizer tokenizerFor(Model m) {
        if (m instanceof GgufModel g) {
            if (tokenizer.given()) {
                throw new BadInputException("--tokenizer is for llama2.c checkpoints; the GGUF model " + m.path()
                        + " carries its own tokenizer");
            }
            GgufTokenizer t = GgufTokenizer.of(g.file());
            if (t.vocabSize() != m.config().vocabSize()) {
                throw new BadInputException("GGUF model " + m.path() + ": its tokenizer has " + t.vocabSize()
                        + " tokens but its embedding has " + m.config().vocabSize() + " rows");
            }
            return t;
        }
        return Tokenizer.load(tokenizer.tokenizer(), m.config().vocabSize());
    }
}
