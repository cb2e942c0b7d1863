package io.kvtier.cli;

import io.kvtier.model.Model;
import io.kvtier.model.ModelFormatException;
import io.kvtier.model.TextTokenizer;
import io.kvtier.model.Tokenizer;
import io.kvtier.model.gguf.GgufModel;
import io.kvtier.model.tokenizer.GgufTokenizer;
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

    /**
     * The tokenizer of {@code m}: a GGUF model's own (from its metadata), or the llama2.c
     * tokenizer of {@code --tokenizer} for a checkpoint.
     *
     * @throws BadInputException for {@code --tokenizer} with a GGUF model, or a vocabulary that
     *         does not fit the model
     */
    public TextTokenizer forModel(Model m) {
        if (m instanceof GgufModel g) {
            if (given()) {
                throw new BadInputException("--tokenizer is for llama2.c checkpoints; the GGUF model " + m.path()
                        + " carries its own tokenizer");
            }
            if (!g.file().metadata().has("tokenizer.ggml.model")) {
                throw new BadInputException("GGUF model " + m.path() + " has no tokenizer (no tokenizer.ggml.* metadata):"
                        + " files written by make-model hold random weights without a vocabulary and are for"
                        + " 'bench generate' only");
            }
            GgufTokenizer t = GgufTokenizer.of(g.file());
            if (t.vocabSize() != m.config().vocabSize()) {
                throw new BadInputException("GGUF model " + m.path() + ": its tokenizer has " + t.vocabSize()
                        + " tokens but its embedding has " + m.config().vocabSize() + " rows");
            }
            return t;
        }
        Path file = Checks.exists(tokenizer(), "--tokenizer");
        try {
            return Tokenizer.load(file, m.config().vocabSize());
        } catch (ModelFormatException e) {
            throw new BadInputException("--tokenizer: " + e.getMessage()); // as ModelOptions.load names --model
        }
    }
}
