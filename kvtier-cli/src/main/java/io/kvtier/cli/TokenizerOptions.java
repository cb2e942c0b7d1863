package io.kvtier.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --tokenizer FILE}: the tokenizer of commands that take or give text ({@code generate}, {@code serve}). */
public final class TokenizerOptions {

    @Option(names = "--tokenizer", paramLabel = "FILE",
            description = "llama2.c tokenizer, for llama2.c checkpoints only: a GGUF model's tokenizer is in its file"
                    + " (default: ../shared/models/tok512.bin beside the project root)")
    Path tokenizer;

    /** True when {@code --tokenizer} was given (a GGUF model refuses it). */
    public boolean given() {
        return tokenizer != null;
    }

    /** The given file, or the default tokenizer; {@link BadInputException} if there is none. */
    public Path tokenizer() {
        return ModelPaths.resolve(tokenizer, ModelPaths.DEFAULT_TOKENIZER, "--tokenizer");
    }
}
