package io.kvtier.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --tokenizer FILE}: the tokenizer of commands that take or give text ({@code generate}, {@code serve}). */
public final class TokenizerOptions {

    @Option(names = "--tokenizer", paramLabel = "FILE",
            description = "llama2.c tokenizer (default: ../shared/models/tok512.bin beside the project root)")
    Path tokenizer;

    /** The given file, or the default tokenizer; {@link BadInputException} if there is none. */
    public Path tokenizer() {
        return ModelPaths.resolve(tokenizer, ModelPaths.DEFAULT_TOKENIZER, "--tokenizer");
    }
}
