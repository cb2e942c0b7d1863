package io.kvtier.cli;

import io.kvtier.replay.Policy;
import picocli.CommandLine.Option;

/** {@code --eviction lru|arc|lru-admit2}: the host tier's eviction (and admission) policy, in the engine and in replay. */
public final class EvictionOptions {

    @Option(names = "--eviction", defaultValue = "lru", paramLabel = "lru|arc|lru-admit2",
            description = "host tier eviction policy: lru (default), arc, or lru-admit2 (LRU admitting a chunk from its second use)")
    String eviction;

    /** The policy; {@link BadInputException} for an unknown name. */
    public Policy policy() {
        try {
            return Policy.parse(eviction);
        } catch (IllegalArgumentException e) {
            throw new BadInputException("--eviction must be lru, arc or lru-admit2, got '" + eviction + "'");
        }
    }

    /** Sets the value (a deprecated alias's setter). */
    void set(String value) {
        eviction = value;
    }
}
