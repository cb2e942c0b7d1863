package io.kvtier.cli;

import io.kvtier.replay.Policy;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code --eviction lru|arc|lru-admit2|lhd|duel}: the host tier's eviction (and admission) policy, in the engine and in replay. */
public final class EvictionOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    /** {@code --eviction}'s default, which the warm-up's engines use too (they are configured as a default generate's). */
    static final String DEFAULT_EVICTION = "duel";

    @Option(names = "--eviction", defaultValue = DEFAULT_EVICTION, paramLabel = "lru|arc|lru-admit2|lhd|duel",
            description = "host tier eviction policy: duel (default; evicts as lru or lhd, whichever would recently have hit more), lru, arc, lru-admit2 (LRU admitting a chunk from its second use), or lhd (hit density by age, learned online)")
    String eviction;

    @Option(names = "--store-policy", defaultValue = "eager", paramLabel = "eager|lazy",
            description = "when a device block is stored in the host tier: eager (default; when its chunk is complete) or lazy "
                    + "(when it comes within --store-horizon blocks of the device free queue's head, i.e. nears eviction)")
    String storePolicy;

    @Option(names = "--store-horizon", defaultValue = "" + io.kvtier.offload.StorePolicy.DEFAULT_HORIZON_BLOCKS, paramLabel = "BLOCKS",
            description = "with --store-policy lazy: blocks from the device free queue's head whose chunks are stored (default ${DEFAULT-VALUE})")
    int storeHorizon;

    @Option(names = "--load-policy", defaultValue = "always", paramLabel = "always|faster|never",
            description = "always (default): load every hit; faster: load only the hit's chunks whose load is estimated faster than "
                    + "recomputing them (online fits of each tier's load bandwidth and queue and of the step time by tokens and context, "
                    + "weighed by the requests waiting for the GPU); never: recompute every hit")
    String loadPolicy;

    /** {@code --store-policy} with {@code --store-horizon}; {@link BadInputException} for a bad value. */
    public io.kvtier.offload.StorePolicy storePolicy() {
        Checks.atLeast(storeHorizon, 1, "--store-horizon");
        Checks.needs(mixee, storePolicy.trim().equalsIgnoreCase("lazy"), "--store-policy lazy", "--store-horizon");
        try {
            return io.kvtier.offload.StorePolicy.parse(storePolicy, storeHorizon);
        } catch (IllegalArgumentException e) {
            throw new BadInputException("--store-policy must be eager or lazy, got '" + storePolicy + "'");
        }
    }

    /** {@code --load-policy}; {@link BadInputException} for a bad value. */
    public io.kvtier.offload.LoadPolicy loadPolicy() {
        try {
            return io.kvtier.offload.LoadPolicy.parse(loadPolicy);
        } catch (IllegalArgumentException e) {
            throw new BadInputException("--load-policy must be always, faster or never, got '" + loadPolicy + "'");
        }
    }

    /** The policy; {@link BadInputException} for an unknown name. */
    public Policy policy() {
        try {
            return Policy.parse(eviction);
        } catch (IllegalArgumentException e) {
            throw new BadInputException("--eviction must be lru, arc, lru-admit2, lhd or duel, got '" + eviction + "'");
        }
    }

    /** Sets the value (a deprecated alias's setter). */
    void set(String value) {
        eviction = value;
    }
}
