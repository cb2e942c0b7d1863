package io.kvtier.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --model FILE}: the checkpoint a command runs (shared by {@code generate}, {@code serve} and the benches). */
public final class ModelOptions {

    @Option(names = "--model", paramLabel = "FILE",
            description = "llama2.c checkpoint (default: ../shared/models/stories260K.bin beside the project root)")
    Path model;

    /** The given file, or the default checkpoint; {@link BadInputException} if there is none. */
    public Path model() {
        return ModelPaths.resolve(model, ModelPaths.DEFAULT_MODEL, "--model");
    }
}
