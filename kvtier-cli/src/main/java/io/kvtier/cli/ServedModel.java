package io.kvtier.cli;

import io.kvtier.model.Model;
import io.kvtier.model.Models;
import io.kvtier.model.TextTokenizer;
import io.kvtier.server.TokenizerModelText;
import java.nio.file.Path;

/**
 * A model file opened for a server, the one way {@code serve} and {@code bench serve} open one: the
 * format recognised by content ({@link Models#load}: GGUF or llama2.c checkpoint), the GGUF file's own
 * tokenizer and chat template or {@code --tokenizer}'s for a checkpoint.
 *
 * @param model the loaded model (owned: {@link #close()} or hand it to an engine)
 * @param text  the tokenizer, chat template and stop tokens the server answers with
 */
record ServedModel(Model model, TokenizerModelText text) implements AutoCloseable {

    /**
     * @throws BadInputException for a file that is missing or neither format (one line naming {@code --model}
     *                           and the file), or a tokenizer that does not fit the model; nothing is left open
     */
    static ServedModel open(Path path, TokenizerOptions tokenizer, String name) {
        tokenizer.checkBeforeLoad(path);
        Model model = ModelOptions.load(path, "--model");
        try {
            TextTokenizer tok = tokenizer.forModel(model);
            return new ServedModel(model, new TokenizerModelText(name, tok, ChatPrompts.template(model, tok)));
        } catch (RuntimeException e) {
            model.close();
            throw e;
        }
    }

    /** Token ids that end a generation: the tokenizer's end-of-generation tokens and the template's. */
    int[] stopTokenIds() {
        return text.stopTokenIds();
    }

    @Override
    public void close() {
        model.close();
    }
}
