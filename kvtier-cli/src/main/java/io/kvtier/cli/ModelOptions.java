package io.kvtier.cli;

import io.kvtier.model.Model;
import io.kvtier.model.ModelFormatException;
import io.kvtier.model.Models;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --model FILE}: the checkpoint a command runs (shared by {@code generate}, {@code serve} and the benches). */
public final class ModelOptions {

    @Option(names = "--model", paramLabel = "FILE",
            description = "llama2.c checkpoint or GGUF file, told apart by content"
                    + " (default: ../shared/models/stories260K.bin beside the project root)")
    Path model;

    /** The given file, or the default checkpoint; {@link BadInputException} if there is none. */
    public Path model() {
        return ModelPaths.resolve(model, ModelPaths.DEFAULT_MODEL, "--model");
    }

    /** {@link #model()} loaded ({@link #load(Path, String)} naming {@code --model}). */
    public Model load() {
        return load(model(), "--model");
    }

    /**
     * {@code file} loaded into memory ({@link Models#load}: GGUF or llama2.c checkpoint, told apart by content).
     *
     * @throws BadInputException one line naming {@code flag} and the file: missing, unreadable, or of neither format
     */
    static Model load(Path file, String flag) {
        Checks.exists(file, flag);
        try {
            io.kvtier.model.DigestCache digests = io.kvtier.model.DigestCache.defaultCache();
            Model m = Models.load(file, digests);
            if (digests.unwritable() != null) {
                System.err.println("kvtier: note: cannot keep the model's digest in " + digests.unwritable()
                        + ": each start hashes the whole model again (KVTIER_CACHE_DIR sets the cache directory)");
            }
            return m;
        } catch (ModelFormatException e) {
            throw new BadInputException(flag + ": " + e.getMessage());
        } catch (java.io.UncheckedIOException e) {
            throw new BadInputException(flag + " " + file + ": cannot read (" + Main.describe(e) + ")");
        }
    }

    /** Loads and closes {@code file} ({@link #load(Path, String)}): a bad file fails before any output, not after. */
    static void check(Path file, String flag) {
        load(file, flag).close();
    }
}
