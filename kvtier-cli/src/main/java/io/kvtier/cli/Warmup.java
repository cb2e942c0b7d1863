package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.OffloadSetup;
import io.kvtier.engine.Request;
import io.kvtier.engine.SamplingParams;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Kernels;
import io.kvtier.model.Model;
import io.kvtier.model.ModelConfig;
import io.kvtier.model.Models;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.replay.Policy;
import io.kvtier.model.TextTokenizer;
import io.kvtier.model.Tokenizer;
import io.kvtier.tier.disk.FileTrees;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BooleanSupplier;

/**
 * Warm start of {@code generate}: JIT compilation of the step's code while the process starts.
 *
 * <p>JDK 25's AOT cache (which the launcher trains) keeps loaded classes and method profiles but
 * no compiled code, so a fresh JVM runs the first steps in the interpreter and C1, where every
 * {@code jdk.incubator.vector} operation allocates a box: about 300 tokens/s on stories260K
 * against 16,000 once C2 has compiled the kernels. {@link #start} (from {@code main}, before the
 * command line is parsed) runs a background thread that drives a real engine through the same
 * entry points as {@code generate} (the Llama runner with its compute pool, the vector kernels,
 * paged attention, greedy sampling, the host tier's store path, the streamed text's printer and
 * detokenizer) on a random model of stories260K's shape and a generated tokenizer, written once
 * and kept in kvtier's cache directory ({@link WarmupFiles}; a temporary directory when that
 * cannot be written), for {@link #TOKENS} generated tokens, a new engine for each request of
 * {@code TOKENS_PER_REQUEST} (as every {@code generate} starts with a new one: the code that runs
 * once per engine is then compiled from profiles that saw it, and the user's first step does not
 * deoptimize it), each engine driven from a new thread as the user's is from one that never ran
 * a step, and the first engine also running short prompts ({@link #PREFILL_LENGTHS}) so that a
 * prompt's prefill is compiled code too; its work makes C2 compile those methods while the main
 * thread parses flags and loads the user's model. Its engines are configured as a default
 * {@code generate}'s (a host tier, so prefill priority): every branch and call the user's steps
 * take should have been taken here after the profiles began, or the user's run meets them as
 * uncommon traps and runs their methods in C1 until C2 has compiled them again (debug output
 * with {@code -Dkvtier.warmup.debug=true}; docs/design-notes.md, "Warm start"). Its outputs are
 * discarded; it shares no state with the user's engine (own pool, own tier, own compute threads).
 *
 * <p>{@code generate} calls {@link #awaitCurrent} just before its first step, so that the
 * generation time it reports is compiled code's (the wait is part of "ready after", counted from
 * process start like everything else): it waits at most {@link #MAX_WAIT_MILLIS}, and not at all
 * for a job of fewer than {@link #MIN_TOKENS_TO_WAIT} tokens, which the warm-up would delay more
 * than it speeds up; in either case the warm-up is stopped at its next step so that it does not
 * compete with the user's run. {@code KVTIER_WARMUP=0} turns it off. A failure of the warm-up
 * (no temporary directory, say) only loses the warm-up.
 */
final class Warmup {

    /**
     * Tokens the warm-up generates: enough for C2 to compile the step's code (measured in the
     * README); property {@code kvtier.warmup.tokens} for measurements.
     */
    static final int TOKENS = Integer.getInteger("kvtier.warmup.tokens", 512);
    /** Tokens per warm-up request: positions as far as a default {@code --max-tokens 256} run reaches. */
    static final int TOKENS_PER_REQUEST = 256;
    /** Longest wait of {@code generate} for the warm-up to finish (property {@code kvtier.warmup.maxWaitMillis}). */
    static final long MAX_WAIT_MILLIS = Long.getLong("kvtier.warmup.maxWaitMillis", 2_000);
    /**
     * Longest further wait, once the warm-up has stopped, for C2 to go quiet ({@link CompilerQuiet}):
     * the methods its last steps made hot are still queued then, and a run that starts meanwhile
     * steps in C1's code beside the compiler threads on a 2-vCPU machine. C2 went quiet 52-92 ms
     * after the warm-up (idle, twenty-ninth session); property {@code kvtier.warmup.compilerWaitMillis},
     * 0: no wait. (Letting the warm-up run on meanwhile kept C2 busy for 0.45-0.6 s: warm10.)
     */
    static final long COMPILER_WAIT_MILLIS = Long.getLong("kvtier.warmup.compilerWaitMillis", 0);
    /**
     * Jobs smaller than this (prompt plus maximum new tokens, summed) do not wait: below it the
     * wait (about one second on stories260K) costs more than the uncompiled steps it saves.
     */
    static final long MIN_TOKENS_TO_WAIT = 256;
    /**
     * Prompt lengths of the short requests (one token each) that run after the first long one:
     * a prompt's prefill (several tokens in one step) takes branches and calls that a decode step
     * never does (attention not fused by kv head from 2 tokens per thread, the tiled matmul, other
     * range tasks). The long requests' own prefills ran before any profile existed, so C2 compiled
     * the step's code as if those paths were never taken, and the user's first step (a prefill)
     * hit uncommon traps in it: 2 fresh runs in 14 then ran 50-90 steps in C1 while C2 compiled
     * the code again (1,221-2,063 tokens/s against 5,000-6,000). Run here, the traps and the
     * recompilation happen in the warm-up. The lengths cover the fused (below 4) and unfused
     * paths, a partial and a full block.
     */
    static final int[] PREFILL_LENGTHS = {5, 3, 9, 2, 17, 6, 4, 12};
    /** Short requests after the first long one (property {@code kvtier.warmup.prefills}, 0: none). */
    static final int PREFILLS = Integer.getInteger("kvtier.warmup.prefills", 16);

    private static final boolean DEBUG = Boolean.getBoolean("kvtier.warmup.debug");

    private static volatile Warmup current;

    private final Thread thread;
    private volatile boolean stop;
    private final long startNanos = System.nanoTime();
    private volatile long endNanos;
    /** When the model and tokenizer were ready (debug output). */
    private volatile long readyNanos;
    /** When the warm-up's first token was generated (debug output). */
    private volatile long firstTokenNanos;
    private volatile int generated;
    private volatile int engines;
    /** Requests the warm-up has run, long and short (tests). */
    private volatile int requests;
    /** Ids of the threads that drove its engines (tests: a new one per engine). */
    private final java.util.Set<Long> engineThreads = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** The temporary directory of the warm-up's files when they could not be kept, else null. */
    private volatile Path dir;
    private final WarmupFiles files;
    /** Compute threads of the warm-up's engines, the user's {@code --threads} (0: one per core). */
    private final int threads;

    private Warmup(WarmupFiles files, int threads) {
        this.files = files;
        this.threads = threads;
        thread = Thread.ofPlatform().daemon().name("kvtier-warm-up").unstarted(this::run);
    }

    /** Starts the warm-up when {@code args} run {@code generate} and {@code KVTIER_WARMUP} is not 0. */
    static void start(String[] args) {
        if (args.length == 0 || !args[0].equals("generate") || "0".equals(System.getenv("KVTIER_WARMUP"))) {
            return;
        }
        current = startNew(WarmupFiles.inCacheHome(), threadsOf(args));
    }

    /**
     * The {@code --threads} value of {@code args} ({@code --threads N} or {@code --threads=N}; the
     * last one), or 0 (one per core) when there is none or it is not a count the command accepts
     * (not a positive number, or more than {@link Checks#mostThreads}: the command's own parser
     * refuses it then, and the warm-up must not start that many threads first). The warm-up runs at the user's thread count: a range
     * is run by its caller alone at 1 thread, and split at 2, so each count has its own hot code;
     * warmed at 2, a {@code --threads 1} run of stories260K spent steps 34-197 at 0.5-1 ms each
     * (0.16 ms once compiled).
     */
    static int threadsOf(String[] args) {
        int threads = 0;
        for (int i = 0; i < args.length; i++) {
            String value = args[i].equals("--threads") && i + 1 < args.length ? args[i + 1]
                    : args[i].startsWith("--threads=") ? args[i].substring("--threads=".length()) : null;
            if (value != null) {
                try {
                    threads = Math.max(0, Integer.parseInt(value.trim()));
                } catch (NumberFormatException e) {
                    threads = 0;
                }
            }
        }
        return threads <= Checks.mostThreads() ? threads : 0;
    }

    /** Starts a warm-up thread on the model and tokenizer of {@code files} (for {@link #start} and tests). */
    static Warmup startNew(WarmupFiles files) {
        return startNew(files, 0);
    }

    /** As {@link #startNew(WarmupFiles)}, with {@code threads} compute threads (0: one per core). */
    static Warmup startNew(WarmupFiles files, int threads) {
        Warmup w = new Warmup(files, threads);
        w.thread.start();
        return w;
    }

    /**
     * Waits for the process's warm-up (if any) as {@link #finish} does, at most
     * {@link #MAX_WAIT_MILLIS}. Later calls return at once.
     *
     * @param jobTokens the job's prompt tokens plus its maximum new tokens, over all requests
     * @param stopRequested whether a signal asked the run to stop: the wait ends then
     */
    static void awaitCurrent(long jobTokens, BooleanSupplier stopRequested) {
        Warmup w = current;
        current = null;
        if (w != null) {
            w.finish(jobTokens, MAX_WAIT_MILLIS, stopRequested);
        }
    }

    /**
     * Waits for the warm-up to finish, at most {@code maxWaitMillis}, then stops it and waits for
     * its thread to end (one step at most: its engine closed, its temporary directory deleted).
     * When {@code jobTokens} is below {@link #MIN_TOKENS_TO_WAIT} it only stops it, without
     * waiting at all: the thread ends at its next step or setup stage, in the background.
     *
     * @return the tokens the warm-up has generated
     */
    int finish(long jobTokens, long maxWaitMillis) {
        return finish(jobTokens, maxWaitMillis, () -> false);
    }

    /** As {@link #finish(long, long)}, the wait also ending when {@code stopRequested} says so (Ctrl-C must not wait 2 s). */
    int finish(long jobTokens, long maxWaitMillis, BooleanSupplier stopRequested) {
        if (jobTokens < MIN_TOKENS_TO_WAIT) {
            stop = true;
            return generated;
        }
        boolean quiet = false;
        long quietStart = 0;
        try {
            long deadline = System.nanoTime() + Math.min(maxWaitMillis, Long.MAX_VALUE / 2_000_000L) * 1_000_000L;
            while (generated < TOKENS && thread.isAlive() && System.nanoTime() - deadline < 0 && !stopRequested.getAsBoolean()) {
                thread.join(1);
            }
            stop = true;
            thread.join();
            quietStart = System.nanoTime();
            quiet = COMPILER_WAIT_MILLIS > 0 && !stopRequested.getAsBoolean()
                    && CompilerQuiet.ofThisProcess().awaitQuiet(COMPILER_WAIT_MILLIS * 1_000_000L);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (DEBUG) {
            if (COMPILER_WAIT_MILLIS > 0) {
                System.err.printf("kvtier: warm-up: C2 %s after %.3f s more%n", quiet ? "quiet" : "not quiet",
                        (System.nanoTime() - quietStart) / 1e9);
            }
            System.err.printf("kvtier: warm-up: %d tokens in %.3f s (files ready after %.3f s, first token after %.3f s), "
                    + "ended %.3f s from process start%n",
                    generated, (endNanos - startNanos) / 1e9, (readyNanos - startNanos) / 1e9,
                    (firstTokenNanos - startNanos) / 1e9, ProcessClock.at(endNanos));
        }
        return generated;
    }

    /** Waits for the warm-up's thread to end (tests). */
    void awaitEnd() throws InterruptedException {
        thread.join();
    }

    /** Engines the warm-up has started (tests: one per long request). */
    int engines() {
        return engines;
    }

    /** Requests the warm-up has run: its long ones and the short prompts after the first (tests). */
    int requests() {
        return requests;
    }

    /** Distinct threads that drove the warm-up's engines, none of them the warm-up's own (tests). */
    long engineThreads() {
        return engineThreads.stream().filter(id -> id != thread.threadId()).count();
    }

    /** The temporary directory of the warm-up's files (deleted when it ends), or null when they were kept or before it exists. */
    Path directory() {
        return dir;
    }

    private void run() {
        WarmupFiles used = files;
        try {
            try {
                used.ensure();
            } catch (IOException e) {
                // No cache directory to keep them in: a temporary one, deleted at the end.
                dir = Files.createTempDirectory("kvtier-warm-up");
                dir.toFile().deleteOnExit(); // on an early exit (bad input): the files first, then the directory
                used = new WarmupFiles(dir);
                used.ensure();
                used.model().toFile().deleteOnExit();
                used.tokenizer().toFile().deleteOnExit();
            }
            if (stop) {
                return; // a small job needs no warm-up: each stage checks, so none runs on for long
            }
            ModelConfig shape = AotTrainingCommand.SHAPE;
            TextTokenizer tok = Tokenizer.load(used.tokenizer(), shape.vocabSize());
            readyNanos = System.nanoTime();
            SplittableRandom random = new SplittableRandom(7);
            for (int id = 0; generated < TOKENS && !stop; id++) {
                int[] prompt = random.ints(5, 3, shape.vocabSize()).toArray();
                prompt[0] = 1; // BOS, as a tokenized prompt starts
                Request r = new Request(id * 1_000L, prompt, Math.min(TOKENS_PER_REQUEST, TOKENS - generated),
                        SamplingParams.GREEDY, ExtraKeys.NONE);
                onNewThread(used, tok, r, id == 0 ? PREFILLS : 0);
            }
        } catch (IOException | RuntimeException e) {
            // Only the warm-up is lost (the run compiles its code itself, as without one); kept
            // files it failed on are written again by the next start.
            used.forget();
            if (DEBUG) {
                System.err.println("kvtier: warm-up failed: " + e);
            }
        } finally {
            endNanos = System.nanoTime();
            if (dir != null) {
                FileTrees.deleteQuietly(dir); // a temporary directory left behind is harmless
            }
        }
    }

    /**
     * A stream built as {@code generate}'s standard output is (its UTF-8 print stream over
     * {@code System.out}'s: a print stream, an 8 KB buffer, {@link StandardOutput}, a file stream)
     * over the null device,
     * so that the JDK's code of the path every streamed token takes is compiled in the warm-up
     * too, not interpreted in the user's first steps; over nothing where the null device cannot
     * be opened.
     */
    static PrintStream discardingStdout() {
        OutputStream sink;
        try {
            sink = new FileOutputStream(NULL_DEVICE);
        } catch (IOException | SecurityException e) {
            sink = OutputStream.nullOutputStream();
        }
        PrintStream stdout = StandardOutput.printStreamOver(sink, StandardCharsets.UTF_8);
        return new PrintStream(stdout, false, StandardCharsets.UTF_8);
    }

    private static final String NULL_DEVICE = System.getProperty("os.name", "").startsWith("Windows") ? "NUL" : "/dev/null";

    /**
     * {@link #generateOne} on a new thread, as the user's run comes to the kernels on a thread that
     * has never run a step (the main thread): its first calls take the paths of a thread without
     * the kernels' thread-local scratch. On the warm-up's own thread those paths ran only in its
     * first steps, before any profile, so C2 compiled them as never taken, and the user's first
     * step hit uncommon traps in the attention kernel (which then ran in C1 for 50-100 steps).
     */
    private void onNewThread(WarmupFiles used, TextTokenizer tok, Request r, int prefills) {
        Throwable[] failure = new Throwable[1];
        Thread t = Thread.ofPlatform().daemon().name("kvtier-warm-up-" + engines).start(() -> {
            try {
                generateOne(used, tok, r, prefills);
            } catch (Throwable e) {
                failure[0] = e;
            }
        });
        try {
            t.join();
        } catch (InterruptedException e) {
            stop = true;
            Thread.currentThread().interrupt();
            return;
        }
        if (failure[0] instanceof RuntimeException e) {
            throw e;
        } else if (failure[0] != null) {
            throw new IllegalStateException("warm-up failed", failure[0]);
        }
    }

    /**
     * One request on a new engine (and model), its text streamed to nowhere, as {@code generate}
     * runs its job: what a run does once, at its start (buffers sized, the prompt's prefill, the
     * printer's first piece), is then also done by code compiled from a profile that saw it, not
     * only in the interpreter; so the user's first steps do not fall back out of compiled code.
     * After it, {@code prefills} prompts of {@link #PREFILL_LENGTHS} tokens run on the same
     * engine for one token each (see {@link #PREFILL_LENGTHS}).
     */
    private void generateOne(WarmupFiles files, TextTokenizer tok, Request r, int prefills) {
        int blocks = (TOKENS_PER_REQUEST + 16 + EngineConfig.DEFAULT_BLOCK_SIZE - 1) / EngineConfig.DEFAULT_BLOCK_SIZE;
        OffloadSetup host = hostSetup();
        // As generate's default: prefill priority with a host tier (its admission order is another path).
        EngineConfig config = EngineConfig.of(EngineConfig.DEFAULT_BLOCK_SIZE, blocks).withStopTokens()
                .withPrefillPriority(OffloadOptions.defaultPrefillPriority(host.enabled()));
        PrintStream discard = discardingStdout();
        ResultPrinter printer = new ResultPrinter(discard, ResultPrinter.Format.TEXT_STREAMED, tok, List.of(""), true);
        try (discard; Engine engine = LlamaRunner.engine(Models.load(files.model(), files.digests()), config, Kernels.best(), threads, host)) {
            engines++;
            engineThreads.add(Thread.currentThread().threadId());
            int before = generated;
            runToEnd(engine, printer, r, before);
            SplittableRandom random = new SplittableRandom(r.id());
            for (int k = 0; k < prefills && !stop; k++) {
                int[] prompt = random.ints(PREFILL_LENGTHS[k % PREFILL_LENGTHS.length], 3, tok.vocabSize()).toArray();
                prompt[0] = 1;
                runToEnd(engine, printer, new Request(r.id() + 1 + k, prompt, 1, SamplingParams.GREEDY, ExtraKeys.NONE), before);
            }
            engine.drainTransfers();
        }
    }

    /**
     * The warm-up engines' host tier: a default {@code generate}'s (its eviction policy and offload
     * configuration, which {@code WarmupTest} checks against a parsed default command line) at
     * 16 MB. Its store and load paths are then the ones the user's steps take: with LRU here, the
     * user's first completed store cost 0.7-5 ms of the step that collected it, against 0.15-0.2
     * ms with the dueling policy's code compiled.
     */
    static OffloadSetup hostSetup() {
        Policy p = Policy.parse(EvictionOptions.DEFAULT_EVICTION);
        return new OffloadSetup(16L << 20, 0, p.evictionPolicy(), OffloadConfig.DEFAULT.withHostAdmitAfter(p.admitAfter()));
    }

    /** Runs {@code r} on {@code engine} until it ends or the warm-up is stopped; {@code before}: tokens generated before the engine. */
    private void runToEnd(Engine engine, ResultPrinter printer, Request r, int before) {
        engine.submit(r);
        printer.submitted(r);
        requests++;
        boolean first = true;
        while (engine.hasWork() && !stop) {
            long t0 = System.nanoTime();
            List<Request> done = engine.advance();
            if (first && DEBUG) {
                System.err.printf("kvtier: warm-up: request %d, first step %.1f us%n", r.id(), (System.nanoTime() - t0) / 1e3);
            }
            first = false;
            printer.stepped();
            done.forEach(printer::finished);
            generated = before + (int) engine.stats().generatedTokens();
            if (firstTokenNanos == 0 && generated > 0) {
                firstTokenNanos = System.nanoTime();
            }
        }
        if (stop) {
            engine.abort(r.id());
            while (engine.hasWork()) {
                engine.advance();
            }
        }
    }
}
