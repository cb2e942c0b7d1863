package io.kvtier.cli;

import io.kvtier.engine.SamplingParams;
import picocli.CommandLine.Option;

/** {@code --temperature}, {@code --top-p}, {@code --seed}: how the next token is chosen. */
public final class SamplingOptions {

    @Option(names = "--temperature", defaultValue = "0", paramLabel = "T",
            description = "0 = greedy (default); otherwise sample from softmax(logits / T)")
    float temperature;

    @Option(names = "--top-p", defaultValue = "1", paramLabel = "P",
            description = "nucleus sampling threshold in (0, 1] (default ${DEFAULT-VALUE} = off)")
    float topP;

    @Option(names = "--seed", defaultValue = "42", paramLabel = "S",
            description = "seed of the per-request sampling streams (default ${DEFAULT-VALUE})")
    long seed;

    /** The sampling parameters; {@link BadInputException} naming the flag if a value is out of range. */
    public SamplingParams params() {
        if (!(temperature >= 0 && temperature <= 2)) { // the server's (and OpenAI's) range: one rule for the concept
            throw new BadInputException("--temperature must be in [0, 2], got " + Checks.shown(temperature));
        }
        if (!(topP > 0 && topP <= 1)) {
            throw new BadInputException("--top-p must be in (0, 1], got " + Checks.shown(topP));
        }
        return new SamplingParams(temperature, topP, seed);
    }
}
