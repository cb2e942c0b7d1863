package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.engine.Request;
import io.kvtier.engine.SamplingParams;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Model;
import io.kvtier.model.Kernels;
import io.kvtier.model.TextTokenizer;
import io.kvtier.model.Tokenizer;
import io.kvtier.model.chat.ChatTemplate;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code ./kvtier generate}: prompts in, text out, through the engine and its caches. */
@Command(name = "generate", mixinStandardHelpOptions = true, defaultValueProvider = GenerateCommand.Defaults.class,
        description = "Generate text for one or more prompts (all submitted at once: continuous batching).")
final class GenerateCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

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

    @Mixin
    InvarianceOptions invariance;

    @Option(names = "--output", defaultValue = "text", paramLabel = "text|jsonl", description = "text (default) or jsonl: one object per prompt, printed as it finishes, with its input index")
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
        invariance.apply();
        checkFlags();
        List<String> texts = collectPrompts();
        Path modelPath = model.model();
        Path tokPath = tokenizer.tokenizer();
        SamplingParams sampling = this.sampling.params();
        if (cacheSalts.contains("")) {
            // An empty salt would silently share the unsalted blocks (vLLM refuses an empty cache_salt too).
            throw new BadInputException("--cache-salt must be a non-empty string; leave the flag out for no salt");
        }
        for (String salt : cacheSalts) {
            // Bytes that are not UTF-8 all become U+FFFD: two such salts would be one tenant.
            PromptSource.checkArgument(salt, "--cache-salt", ": salts differing there would share blocks");
        }
        if (!cacheSalts.isEmpty() && cacheSalts.size() != 1 && cacheSalts.size() != texts.size()) {
            throw new BadInputException("--cache-salt given " + cacheSalts.size() + " times for " + texts.size()
                    + " prompts: give it once, or once per prompt");
        }
        Checks.needs(spec, sequential, "--sequential", "--clear-device-cache-between");
        Checks.notWith(spec, sequential, "--sequential", "one request runs at a time", List.of("--max-running"));
        OffloadSetup offloadSetup = offload.setup(eviction, disk, System.console() != null && System.console().isTerminal());
        offloadSetup = remote.addTo(offloadSetup);
        OffloadOptions.checkKvGroups(offloadSetup, modelPath);
        tokenizer.checkBeforeLoad(modelPath);
        // Installed before the model loads (a large GGUF's first load hashes it for seconds): a
        // signal then stops the run before its first step, with the summary, not silently.
        try (StopSignals signals = StopSignals.install()) {
            return loadAndGenerate(signals, texts, modelPath, sampling, offloadSetup);
        }
    }

    private int loadAndGenerate(StopSignals signals, List<String> texts, Path modelPath, SamplingParams sampling,
                                OffloadSetup offloadSetup) throws IOException {
        Model checkpoint = ModelOptions.load(modelPath, "--model");
        try {
            TextTokenizer tok = tokenizer.forModel(checkpoint);
            offload.fitChunk(batch, offloadSetup.enabled(), checkpoint.config().seqLen());
            ChatTemplate template = chat ? ChatPrompts.template(checkpoint, tok) : null;
            long t = System.nanoTime();
            List<int[]> ids = PromptSource.encode(texts, tok, checkpoint.config().seqLen(),
                    text -> template != null ? ChatPrompts.encode(template, tok, system, text) : tok.encode(text, true, true),
                    this::promptSource);
            long tokenizeNanos = System.nanoTime() - t;
            EngineConfig config = engineOptions.config(checkpoint, batch, -1, ids, maxTokens.maxTokens(), sequential ? 1 : ids.size())
                    .withStopTokens(template != null ? template.stopTokenIds() : tok.stopTokenIds())
                    .withPrefillPriority(offload.prefillPriority(offloadSetup.enabled()));
            return generate(signals, checkpoint, config, tok, texts, ids, sampling, offloadSetup, tokenizeNanos);
        } finally {
            checkpoint.close(); // the engine closes it too; closing twice is harmless
        }
    }

    /** Runs the tokenized prompts: results printed as they finish, the summary, a clean stop on SIGINT/SIGTERM. */
    private int generate(StopSignals signals, Model checkpoint, EngineConfig config, TextTokenizer tok, List<String> texts,
                         List<int[]> ids, SamplingParams sampling, OffloadSetup offloadSetup, long tokenizeNanos) {
        GenerateRun.Outcome outcome;
        // Installed first, closed last: the tiers' lines while the engine closes are kept off the text too.
        try (TerminalLines lines = TerminalLines.install();
             Engine engine = LlamaRunner.engine(checkpoint, config, Kernels.best(), threads.threads(), offloadSetup)) {
            disk.opened(engine, System.console() != null && System.console().isTerminal());
            List<Request> requests = new ArrayList<>();
            io.kvtier.engine.RequestDoesNotFitException worst = null;
            int worstIndex = -1;
            for (int i = 0; i < ids.size(); i++) {
                String salt = cacheSalts.isEmpty() ? null : cacheSalts.get(cacheSalts.size() == 1 ? 0 : i);
                Request r = new Request(i, ids.get(i), maxTokens.maxTokens(), sampling, ExtraKeys.salt(salt));
                try {
                    engine.checkFits(r);
                } catch (io.kvtier.engine.RequestDoesNotFitException e) {
                    // PromptSource.encode refused prompts beyond the context: only the pool is left to say.
                    if (e.promptBeyondContext()) {
                        throw new BadInputException("prompt " + (i + 1) + ": " + e.getMessage(), e);
                    }
                    if (worst == null || e.blocks() > worst.blocks()
                            || e.blocks() == worst.blocks() && e.newTokensThatFit() < worst.newTokensThatFit()) {
                        worst = e;
                        worstIndex = i;
                    }
                }
                requests.add(r);
            }
            if (worst != null) {
                // The prompt that needs the most blocks (then the longest) needs the fewest new tokens to fit: advice that fits them all.
                throw new BadInputException(PromptSource.beyondPool(worstIndex, worst), worst);
            }
            // While the warm-up still runs: a new block's first write would fault in each of its pages mid-step.
            engine.prefault(requests, PREFAULT_MAX_BYTES);
            disk.warnRoom(); // once every input is checked: a refused run says only why
            threads.warnIfOversubscribed("generate");
            PrintStream out = new PrintStream(lines.out(), false, StandardCharsets.UTF_8);
            ResultPrinter.Format format = output == OutputFormat.jsonl ? ResultPrinter.Format.JSONL
                    : sequential || ids.size() == 1 ? ResultPrinter.Format.TEXT_STREAMED : ResultPrinter.Format.TEXT;
            Warmup.awaitCurrent(requests.stream().mapToLong(r -> r.promptIds().length + (long) r.maxTokens()).sum(), signals::requested);
            boolean debug = Boolean.getBoolean("kvtier.warmup.debug");
            if (debug) {
                System.err.println(ThreadCpu.line("run start"));
            }
            long t0 = System.nanoTime();
            GenerateRun run = new GenerateRun(engine, new ResultPrinter(out, format, tok, texts, !chat), signals,
                    sequential, clearDeviceCacheBetween);
            outcome = run.run(requests);
            long t1 = System.nanoTime();
            if (debug) {
                System.err.println(ThreadCpu.line("run end"));
                run.printStepTimes(System.err);
            }
            RunTimes times = new RunTimes(ProcessClock.at(t0), tokenizeNanos / 1e9,
                    outcome.firstTokenNanos() == 0 ? 0 : ProcessClock.at(outcome.firstTokenNanos()), ProcessClock.at(t1),
                    (t1 - t0) / 1e9);
            if (outcome.end() == GenerateRun.End.OUTPUT_CLOSED) {
                return StandardOutput.statusOfFailedOutput(lines.plainErr()); // 141 for a reader gone, as SIGPIPE
            }
            if (engine.offload() != null) {
                // On-evict disk writes of a clean stop happen now, not after the summary that counts them.
                engine.offload().flushToDisk();
            }
            GenerateReport report = new GenerateReport(engine, times, outcome, MemoryUse.of(engine, checkpoint.path()));
            report.writeSummary(System.err, disk.roomNote(engine));
            stats.write(List.of(report.stats()), false);
        }
        return outcome.end() == GenerateRun.End.SIGNALLED ? 130 : 0;
    }

    /**
     * Most device-pool bytes generate makes resident before its first step ({@link Engine#prefault}):
     * 64 MiB, 16,384 pages, about 0.1 s of page faults on this project's VM, mostly inside the
     * warm-up's wait; the 110M shape's 256-token job needs 20 MB, stories260K's 0.7 MB.
     */
    static final long PREFAULT_MAX_BYTES = 64L << 20;

    /** Flag values that are wrong whatever the model: one line, exit 2, before anything is loaded. */
    private void checkFlags() {
        Checks.needs(spec, chat, "--chat", "--system");
        batch.check();
        engineOptions.check();
        threads.threads();
        offload.check(eviction, disk);
        stats.check(List.of(), promptsFile == null || promptsFile.toString().equals("-") ? List.of()
                : List.of(new Checks.FileFlag("--prompts", promptsFile)));
    }

    /** Where prompt {@code i} (0-based) of {@link #collectPrompts} came from: the --prompt flags come first. */
    private String promptSource(int i) {
        return i < prompts.size() || promptsFile == null ? "--prompt" : "--prompts line " + (i - prompts.size() + 1);
    }

    private List<String> collectPrompts() throws IOException {
        List<String> all = new ArrayList<>(prompts);
        for (String p : prompts) {
            PromptSource.checkArgument(p, "--prompt");
        }
        if (promptsFile != null) {
            List<String> lines = PromptSource.read(promptsFile, "--prompts");
            if (lines.isEmpty()) {
                throw new BadInputException(PromptSource.where(promptsFile, "--prompts") + ": the file is empty (one prompt a line expected)");
            }
            all.addAll(lines);
        }
        if (all.isEmpty()) {
            all.add("");
        }
        return all;
    }
}
