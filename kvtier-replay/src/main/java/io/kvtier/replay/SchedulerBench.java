package io.kvtier.replay;

import io.kvtier.engine.Engine;
import io.kvtier.engine.EngineConfig;
import io.kvtier.engine.Request;
import io.kvtier.engine.SamplingParams;
import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.KvLayout;
import io.kvtier.kv.Namespace;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadScheduler;
import io.kvtier.replay.sim.CostModel;
import io.kvtier.replay.sim.SimulatedModelRunner;
import io.kvtier.replay.sim.SimulatedTransferEngine;
import io.kvtier.replay.sim.VirtualClock;
import io.kvtier.tier.CachePolicy;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.KvEvents;
import java.util.SplittableRandom;

/**
 * Cost of the engine's control plane per step: {@code running} requests decode together
 * (after their prefill) through the real scheduler, KV manager, offload scheduler and host tier,
 * with the simulated runner, whose forward pass costs next to nothing in real time. The figure is
 * the real (wall-clock) time of {@link Engine#step()} less the time inside the runner: schedule,
 * block allocation, sampling, key extension, prefix caching and store decisions, for one step.
 */
public final class SchedulerBench {

    /**
     * @param running          requests decoding in each measured step
     * @param steps            steps measured per repeat
     * @param nanosPerStep     best repeat: engine time per step outside the forward pass, ns
     * @param nanosPerStepMean mean over repeats, ns
     * @param tokensPerStep    tokens scheduled per measured step (one per running request)
     */
    public record Result(int running, int steps, double nanosPerStep, double nanosPerStepMean, double tokensPerStep) {
    }

    private SchedulerBench() {
    }

    /**
     * Runs {@code repeats} measurements of {@code steps} decode steps at {@code running} running
     * requests with {@code promptTokens}-token prompts, after one warm-up repeat.
     *
     * @param maxBatchTokens token budget of one step (prefill chunks of the requests still starting);
     *                       at least {@code running}, so that every running request decodes in each step
     * @throws IllegalArgumentException if a size is below 1 or {@code maxBatchTokens < running}, or
     *                                  if the requests' positions would not fit an {@code int}
     */
    public static Result run(int running, int promptTokens, int steps, int blockSize, int maxBatchTokens, int repeats) {
        if (running < 1 || promptTokens < 1 || steps < 1 || blockSize < 1 || maxBatchTokens < 1 || repeats < 1) {
            throw new IllegalArgumentException("bench needs positive sizes: running=" + running + " prompt=" + promptTokens
                    + " steps=" + steps + " block=" + blockSize + " max batch tokens=" + maxBatchTokens + " repeats=" + repeats);
        }
        if (maxBatchTokens < running) {
            throw new IllegalArgumentException("a step's budget of " + maxBatchTokens + " tokens cannot decode "
                    + running + " running requests at once");
        }
        double best = Double.MAX_VALUE;
        double sum = 0;
        double tokens = 0;
        for (int rep = 0; rep <= repeats; rep++) {
            double[] m = once(running, promptTokens, steps, blockSize, maxBatchTokens, rep);
            if (rep > 0) { // the first repeat warms the JIT up
                best = Math.min(best, m[0]);
                sum += m[0];
                tokens = m[1];
            }
        }
        return new Result(running, steps, best, sum / repeats, tokens);
    }

    /**
     * Steps until every one of {@code running} requests has its first token, at most. Request k (in
     * admission order) prefills its {@code promptTokens} while at most the k before it decode, one
     * token each; once those have their first token it gets at least {@code maxBatchTokens - k}
     * tokens a step (positive, as the budget is at least {@code running}), and its first token comes
     * with the step that computes its last prompt token (one step of slack each). Close to the steps
     * taken when the requests start one after another, as long prompts do: 256 requests of 1,024
     * tokens, at most 6,656 steps at a budget of 256, 512 at 8,192.
     */
    static long prefillStepsBound(int running, int promptTokens, int maxBatchTokens) {
        long steps = 0;
        for (int k = 0; k < running; k++) {
            steps += Math.ceilDiv(promptTokens, maxBatchTokens - k) + 1L;
        }
        return steps;
    }

    private static boolean allDecoding(Engine engine, int running) {
        var r = engine.scheduler().running();
        return r.size() == running && r.stream().allMatch(q -> q.numOutputTokens() > 0);
    }

    /** One measurement: {ns per step outside the forward pass, tokens per step}. */
    private static double[] once(int running, int promptTokens, int steps, int blockSize, int maxBatchTokens, long seed) {
        KvLayout layout = new KvLayout(1, 1, 1, blockSize);
        long prefillSteps = prefillStepsBound(running, promptTokens, maxBatchTokens);
        // Requests admitted first decode while the others prefill, one token a step: none may
        // finish before the last measured step, or the batch would never be whole again.
        long positions = (long) promptTokens + prefillSteps + steps + 1 + 64;
        if (positions > Integer.MAX_VALUE / 2) {
            throw new IllegalArgumentException("prompts of " + promptTokens + " tokens prefilled " + running
                    + " at a time in steps of " + maxBatchTokens + " tokens need " + positions + " positions a request");
        }
        int maxTokens = (int) (prefillSteps + steps + 1);
        long poolBlocks = (long) running * (layout.blocksFor((long) promptTokens + maxTokens) + 1);
        if (poolBlocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(running + " requests of " + promptTokens + " prompt and " + maxTokens
                    + " output tokens need " + poolBlocks + " blocks of " + blockSize + ", more than a pool holds");
        }
        int blocks = (int) poolBlocks;
        EngineConfig cfg = new EngineConfig(blockSize, blocks, maxBatchTokens, running, true, -1);
        VirtualClock clock = new VirtualClock();
        CostModel cost = CostModel.REFERENCE;
        Namespace ns = Namespace.of("bench", layout);
        BlockPool pool = new BlockPool(blocks, layout);
        int hostChunks = running * layout.blocksFor(promptTokens) * 2;
        SimulatedTransferEngine transfers = new SimulatedTransferEngine(cost, clock, blockSize);
        HostTier host = HostTier.withoutSlab(hostChunks, CachePolicy.lru(), KvEvents.discarding());
        OffloadScheduler offload = new OffloadScheduler(OffloadConfig.DEFAULT, pool, host, transfers, ns);
        SimulatedModelRunner runner = new SimulatedModelRunner(cost, clock, promptTokens + maxTokens + 64, null);
        try (Engine engine = new Engine(cfg, pool, runner, BlockHasher.sha256(ns), offload)) {
            SplittableRandom rnd = new SplittableRandom(seed);
            for (int i = 0; i < running; i++) {
                int[] prompt = new int[promptTokens];
                for (int j = 0; j < promptTokens; j++) {
                    prompt[j] = rnd.nextInt(32_000);
                }
                engine.submit(new Request(i, prompt, maxTokens, SamplingParams.GREEDY, ExtraKeys.NONE));
            }
            // Prefill everyone: until every request has its first token, within the bound (else a bug).
            for (long s = 0; !allDecoding(engine, running); s++) {
                if (s > prefillSteps) {
                    throw new IllegalStateException("bench: " + running + " requests still prefilling after " + s
                            + " steps, more than the bound " + prefillSteps + " (running " + engine.scheduler().running().size()
                            + ", waiting " + engine.scheduler().waiting().size() + ")");
                }
                engine.step();
            }
            long forward0 = engine.stats().forwardNanos();
            long tokens0 = engine.stats().computedTokens();
            long t0 = System.nanoTime();
            for (int s = 0; s < steps; s++) {
                engine.step();
            }
            long wall = System.nanoTime() - t0;
            long inForward = engine.stats().forwardNanos() - forward0;
            if (engine.scheduler().running().size() != running) {
                throw new IllegalStateException("bench lost running requests: " + engine.scheduler().running().size());
            }
            return new double[] {(double) (wall - inForward) / steps,
                    (double) (engine.stats().computedTokens() - tokens0) / steps};
        } finally {
            transfers.close();
            host.close();
        }
    }
}
