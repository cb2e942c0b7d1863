package io.kvtier.cli;

import io.kvtier.model.Transformer;
import picocli.CommandLine.Option;

/**
 * {@code --batch-invariant}: a request's greedy tokens and logit bits do not depend on what runs
 * beside it (generate, serve, bench generate, bench serve). Every matrix product then runs
 * activation row by activation row through the decode kernels ({@link Transformer#BATCH_INVARIANT}).
 */
public final class InvarianceOptions {

    @Option(names = "--batch-invariant",
            description = "a request's tokens and logits do not depend on its batch companions (slower prefill and batches; README)")
    boolean batchInvariant;

    /**
     * Sets {@link Transformer#BATCH_INVARIANT} for the transformers built after this call (the
     * engine's, read when it is constructed). Call before building the engine.
     */
    public void apply() {
        if (batchInvariant) {
            System.setProperty(Transformer.BATCH_INVARIANT, "true");
        }
    }

    public boolean enabled() {
        return batchInvariant;
    }
}
