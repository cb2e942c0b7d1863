package io.kvtier.cli;

import io.kvtier.replay.SchedulerBench;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./kvtier bench scheduler}: the engine's control-plane cost per step (schedule, commit,
 * offload decisions) at N running decoding requests, with the simulated model runner.
 */
@Command(name = "scheduler", mixinStandardHelpOptions = true,
        description = "Engine time per step outside the forward pass, at N running requests (simulated model).")
final class BenchSchedulerCommand implements Callable<Integer> {

    @Option(names = "--running", defaultValue = "256", description = "requests decoding together (default ${DEFAULT-VALUE})")
    int running;

    @Option(names = "--prompt-tokens", defaultValue = "1024", description = "prompt length of each request (default ${DEFAULT-VALUE})")
    int promptTokens;

    @Option(names = "--steps", defaultValue = "2000", description = "decode steps measured per repeat (default ${DEFAULT-VALUE})")
    int steps;

    @Option(names = "--block-size", defaultValue = "16", description = "tokens per block (default ${DEFAULT-VALUE})")
    int blockSize;

    @Option(names = "--repeats", defaultValue = "5", description = "measured repeats after one warm-up (default ${DEFAULT-VALUE})")
    int repeats;

    @Override
    public Integer call() {
        SchedulerBench.Result r = SchedulerBench.run(running, promptTokens, steps, blockSize, repeats);
        System.out.printf("scheduler: %d running requests, %d-token prompts, block %d, offloading to a host tier (LRU)%n",
                running, promptTokens, blockSize);
        System.out.printf("  engine time per step outside the forward pass: %,.1f us best, %,.1f us mean of %d "
                + "(%.0f ns per running request, %.0f tokens per step)%n", r.nanosPerStep() / 1e3,
                r.nanosPerStepMean() / 1e3, repeats, r.nanosPerStep() / running, r.tokensPerStep());
        return 0;
    }
}
