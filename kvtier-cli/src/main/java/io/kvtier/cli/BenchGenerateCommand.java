package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.LlamaRunner;
import io.kvtier.engine.Request;
import io.kvtier.engine.SamplingParams;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ./kvtier bench generate}: decode and prefill speed through the whole engine (scheduler,
 * paged KV, sampling), greedy, prefix cache off so every token is computed. Each figure is the
 * best of {@code --repeats} runs after 2 s of warm-up runs.
 */
@Command(name = "generate", mixinStandardHelpOptions = true,
        defaultValueProvider = BenchGenerateCommand.Defaults.class,
        description = "Single-sequence decode, batched decode (--max-running sequences) and prefill tokens/s on a model.")
final class BenchGenerateCommand implements Callable<Integer> {

    @Mixin
    ModelOptions model;

    @Mixin
    MaxTokensOptions maxTokens;

    @Mixin
    BatchOptions batch;

    @Option(names = "--repeats", defaultValue = "3", description = "measured runs after 2 s of warm-up; the best is reported (default ${DEFAULT-VALUE})")
    int repeats;

    @Mixin
    ThreadsOptions threads;

    /** Defaults of the shared options that differ between commands: --max-running is the batched figure's sequences. */
    static final class Defaults extends FlagDefaults {
        Defaults() {
            super(java.util.Map.of("--max-tokens", "256", "--block-size", "16", "--max-batch-tokens", "4096",
                    "--max-running", "32"));
        }
    }

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    private final FormerNames former = new FormerNames();

    // Former spellings, kept for one release (FlagVocabulary.FORMER_NAMES).
    @Option(names = "--decode-tokens", hidden = true, description = "deprecated: --max-tokens")
    void decodeTokens(int v) {
        former.use("--decode-tokens", () -> maxTokens.set(v));
    }

    @Option(names = "--batch", hidden = true, description = "deprecated: --max-running")
    void batch(int v) {
        former.use("--batch", () -> batch.setMaxRunning(v));
    }

    @Override
    public Integer call() {
        former.apply(spec);
        int decodeTokens = maxTokens.maxTokens();
        int sequences = batch.maxRunning();
        int blockSize = batch.blockSize();
        int stepTokens = batch.maxBatchTokens() != null ? batch.maxBatchTokens() : 4096;
        Checks.atLeast(repeats, 1, "--repeats");
        int computeThreads = threads.threads();
        Path modelPath = model.model();
        Checkpoint checkpoint = Checkpoint.load(modelPath);
        int seqLen = checkpoint.config().seqLen();
        int steps = Math.min(decodeTokens, seqLen - 1);
        int blocks = (sequences + 1) * checkpoint.config().kvLayout(blockSize).blocksFor(seqLen);
        EngineConfig config = new EngineConfig(blockSize, blocks, stepTokens, sequences, false, -1);
        System.out.printf("model %s: %s, kernels %s, %d compute threads%n", modelPath.getFileName(),
                checkpoint.config(), Kernels.best().name(), threads.resolved());
        try (Engine engine = LlamaRunner.engine(checkpoint, config, Kernels.best(), computeThreads)) {
            long[] ids = {0};
            double single = best(() -> decode(engine, ids, 1, steps));
            double batched = best(() -> decode(engine, ids, sequences, steps));
            int prompt = Math.min(seqLen - 1, 512);
            double prefill = best(() -> prefill(engine, ids, prompt));
            System.out.printf("single-sequence decode: %,.0f tokens/s (%d tokens)%n", single, steps);
            System.out.printf("%d-sequence decode:     %,.0f tokens/s (%.2fx single)%n", sequences, batched, batched / single);
            System.out.printf("prefill:                %,.0f tokens/s (%d-token prompt)%n", prefill, prompt);
        }
        return 0;
    }

    private double best(java.util.function.DoubleSupplier run) {
        // The Vector API kernels reach full speed only after C2 has compiled them: warm up for 2 s.
        long warmUntil = System.nanoTime() + 2_000_000_000L;
        do {
            run.getAsDouble();
        } while (System.nanoTime() < warmUntil);
        double best = 0;
        for (int i = 0; i < Math.max(1, repeats); i++) {
            best = Math.max(best, run.getAsDouble());
        }
        return best;
    }

    /** Tokens/s of {@code n} sequences each decoding {@code steps} tokens after a 1-token prompt. */
    private static double decode(Engine engine, long[] ids, int n, int steps) {
        for (int i = 0; i < n; i++) {
            // Distinct first tokens so the sequences differ; no stop token, so all run to the end.
            engine.submit(new Request(ids[0]++, new int[] {1 + i % 500}, steps, SamplingParams.GREEDY, ExtraKeys.NONE));
        }
        engine.step(); // the 1-token prefill
        long t0 = System.nanoTime();
        long before = engine.stats().generatedTokens();
        engine.runToCompletion();
        return (engine.stats().generatedTokens() - before) / ((System.nanoTime() - t0) / 1e9);
    }

    /** Prompt tokens/s of one prompt computed in one step. */
    private static double prefill(Engine engine, long[] ids, int promptLen) {
        int[] prompt = new int[promptLen];
        for (int i = 0; i < promptLen; i++) {
            prompt[i] = 1 + (i * 7) % 400;
        }
        engine.submit(new Request(ids[0]++, prompt, 1, SamplingParams.GREEDY, ExtraKeys.NONE));
        long t0 = System.nanoTime();
        engine.runToCompletion();
        return promptLen / ((System.nanoTime() - t0) / 1e9);
    }
}
