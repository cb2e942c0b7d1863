package io.kvtier.cli;

import io.kvtier.model.Checkpoint;
import io.kvtier.model.Model;
import io.kvtier.model.ModelFormatException;
import io.kvtier.model.TextTokenizer;
import io.kvtier.model.Models;
import io.kvtier.model.Tokenizer;
import io.kvtier.model.gguf.GgufFile;
import io.kvtier.model.gguf.GgufMetadata;
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
     * Checks from the model file's header alone that this tokenizer can serve it, so that a
     * mismatch fails in milliseconds rather than after a large model has loaded and been hashed
     * (a minute for a 2 GB checkpoint): {@code --tokenizer} refused for a GGUF file, a GGUF file
     * without a vocabulary, a llama2.c tokenizer whose size is not the checkpoint's vocabulary. A
     * header that cannot be read passes: the load then says why.
     *
     * @throws BadInputException as {@link #forModel} would after the load
     */
    public void checkBeforeLoad(Path model) {
        if (GgufFile.isGguf(model)) {
            GgufMetadata md = GgufFile.readHeader(model, Models.HEADER_BYTES);
            if (md != null) {
                checkGguf(model, md.has(GGUF_TOKENIZER_KEY));
            }
            return;
        }
        int vocab = Checkpoint.vocabSizeFromHeader(model);
        if (vocab > 0) {
            llama2cTokenizer(vocab);
        }
    }

    /**
     * The tokenizer of {@code m}: a GGUF model's own (from its metadata), or the llama2.c
     * tokenizer of {@code --tokenizer} for a checkpoint.
     *
     * @throws BadInputException for {@code --tokenizer} with a GGUF model, a GGUF model without a
     *         vocabulary, or a vocabulary that does not fit the model
     */
    public TextTokenizer forModel(Model m) {
        if (m instanceof GgufModel g) {
            checkGguf(m.path(), g.file().metadata().has(GGUF_TOKENIZER_KEY));
            GgufTokenizer t = GgufTokenizer.of(g.file());
            if (t.vocabSize() != m.config().vocabSize()) {
                throw new BadInputException("GGUF model " + m.path() + ": its tokenizer has " + t.vocabSize()
                        + " tokens but its embedding has " + m.config().vocabSize() + " rows");
            }
            return t;
        }
        return llama2cTokenizer(m.config().vocabSize());
    }

    private static final String GGUF_TOKENIZER_KEY = "tokenizer.ggml.model";

    private void checkGguf(Path model, boolean hasTokenizer) {
        String makeModel = "files written by make-model hold random weights without a vocabulary and are for"
                + " 'bench generate' only";
        if (!hasTokenizer) {
            throw new BadInputException("GGUF model " + model + " has no tokenizer (no tokenizer.ggml.* metadata)"
                    + (given() ? ", and --tokenizer takes a llama2.c tokenizer for llama2.c checkpoints only: " : ": ")
                    + makeModel);
        }
        if (given()) {
            throw new BadInputException("--tokenizer is for llama2.c checkpoints; the GGUF model " + model
                    + " carries its own tokenizer");
        }
    }

    /** {@code --tokenizer}'s file (or the default) read for a vocabulary of {@code vocabSize}. */
    private TextTokenizer llama2cTokenizer(int vocabSize) {
        Path file = Checks.exists(tokenizer(), "--tokenizer");
        try {
            return Tokenizer.load(file, vocabSize);
        } catch (ModelFormatException e) {
            // Named as ModelOptions.load names --model; the default file is named as the default.
            throw new BadInputException(given() ? "--tokenizer: " + e.getMessage()
                    : e.getMessage() + "; that is the default tokenizer: give the model's own with --tokenizer");
        }
    }
}
