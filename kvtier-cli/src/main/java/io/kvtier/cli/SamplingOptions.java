package io.kvtier.cli;

import io.kvtier.engine.SamplingParams;
import picocli.CommandLine.Option;

/** {@code --temperature}, {@code --top-p}, {@code --seed}: how the next token is chosen. */
public final class SamplingOptions {

    @Option(names = "--temperature", defaultValue = "0", paramLabel = "T",
            description = "0 = greedy (default); otherwise sample from softmax(logits / T)")
    double temperature; // parsed as typed; the range is checked on the float the sampler takes

    @Option(names = "--top-p", defaultValue = "1", paramLabel = "P",
            description = "nucleus sampling threshold in (0, 1] (default ${DEFAULT-VALUE} = off)")
    double topP;

    @Option(names = "--seed", defaultValue = "42", paramLabel = "S",
            description = "seed of the per-request sampling streams (default ${DEFAULT-VALUE})")
    long seed;

    /** The sampling parameters; {@link BadInputException} naming the flag if a value is out of range. */
    public SamplingParams params() {
        float t = (float) temperature;
        float p = (float) topP;
        if (!(temperature >= 0 && t >= 0 && t <= 2)) { // the server's (and OpenAI's) range: one rule for the concept
            throw new BadInputException("--temperature must be in [0, 2], got " + Checks.shown(temperature));
        }
        if (!(topP > 0 && p > 0 && p <= 1)) { // 1e-46 is 0 as a float: refused, naming what was typed
            throw new BadInputException("--top-p must be in (0, 1], got " + Checks.shown(topP));
        }
        return new SamplingParams(t, p, seed);
    }
}
