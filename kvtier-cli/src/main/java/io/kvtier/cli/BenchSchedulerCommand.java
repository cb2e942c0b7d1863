package io.kvtier.cli;

import io.kvtier.replay.ReplayConfig;
import io.kvtier.replay.SchedulerBench;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ./kvtier bench scheduler}: the engine's control-plane cost per step (schedule, commit,
 * offload decisions) at N running decoding requests, with the simulated model runner.
 */
@Command(name = "scheduler", mixinStandardHelpOptions = true, defaultValueProvider = BenchSchedulerCommand.Defaults.class,
        description = "Engine time per step outside the forward pass, at N running requests (simulated model).")
final class BenchSchedulerCommand implements Callable<Integer>, SizedByFlags {

    @Mixin
    BatchOptions batch;

    @Option(names = "--prompt-tokens", converter = TokenCount.class, paramLabel = "N", defaultValue = "1024", description = "prompt length of each request (default ${DEFAULT-VALUE})")
    int promptTokens;

    @Option(names = "--steps", paramLabel = "N", defaultValue = "2000", description = "decode steps measured per repeat (default ${DEFAULT-VALUE})")
    int steps;

    @Option(names = "--repeats", paramLabel = "N", defaultValue = "5", description = "measured repeats after one warm-up (default ${DEFAULT-VALUE})")
    int repeats;

    /** Defaults of the shared options that differ between commands: --max-running requests decode together. */
    static final class Defaults extends FlagDefaults {
        Defaults() {
            super(java.util.Map.of("--block-size", "16", "--max-batch-tokens", String.valueOf(ReplayConfig.TIMED_MAX_BATCH_TOKENS),
                    "--max-running", "256"));
        }
    }

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    private final FormerNames former = new FormerNames();

    // Former spelling, kept for one release (FlagVocabulary.FORMER_NAMES).
    @Option(names = "--running", hidden = true, description = "deprecated: --max-running")
    void running(int v) {
        former.use("--running", () -> batch.setMaxRunning(v));
    }

    /** Every request holds its prompt and, as KV blocks, about its prompt plus the steps it decodes. */
    @Override
    public String memoryAdvice() {
        return "--prompt-tokens, --max-running or --steps (the bench holds --max-running requests of --prompt-tokens"
                + " plus about --steps positions each)";
    }

    @Override
    public Integer call() {
        former.apply(spec);
        int running = batch.maxRunning();
        int blockSize = batch.blockSize();
        Integer stepTokens = batch.maxBatchTokens();
        Checks.atLeast(promptTokens, 1, "--prompt-tokens");
        Checks.atLeast(steps, 1, "--steps");
        Checks.atLeast(repeats, 1, "--repeats");
        int budget = stepTokens != null ? stepTokens : ReplayConfig.TIMED_MAX_BATCH_TOKENS;
        if (budget < running) {
            throw new BadInputException("--max-batch-tokens " + budget + " is below --max-running " + running
                    + ": each measured step decodes one token of every running request");
        }
        SchedulerBench.Result r = SchedulerBench.run(running, promptTokens, steps, blockSize, budget, repeats);
        System.out.printf("scheduler: %s, %d-token prompts, block %d, offloading to a host tier (LRU)%n",
                io.kvtier.text.Plural.count(running, "running request"), promptTokens, blockSize);
        System.out.printf("  engine time per step outside the forward pass: %,.1f us best, %,.1f us mean of %d "
                + "(%,.2f us per running request, %,.0f tokens per step)%n", r.nanosPerStep() / 1e3,
                r.nanosPerStepMean() / 1e3, repeats, r.nanosPerStep() / running / 1e3, r.tokensPerStep());
        return 0;
    }
}
