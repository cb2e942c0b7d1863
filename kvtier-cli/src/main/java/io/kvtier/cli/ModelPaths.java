package io.kvtier.cli;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Default model and tokenizer: {@code ../shared/models/stories260K.bin} and {@code tok512.bin}
 * beside the project root, whatever the working directory. The root is the launcher's
 * {@code -Dkvtier.root}; failing that, the first directory upward from the working directory
 * that has {@code ../shared/models}.
 */
final class ModelPaths {

    static final String DEFAULT_MODEL = "stories260K.bin";
    static final String DEFAULT_TOKENIZER = "tok512.bin";

    private ModelPaths() {
    }

    /** The shared models directory, or null if none is found. */
    static Path sharedModels() {
        String root = System.getProperty("kvtier.root");
        if (root != null) {
            Path p = Path.of(root).toAbsolutePath().resolveSibling("shared").resolve("models");
            if (Files.isDirectory(p)) {
                return p;
            }
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path p = dir.resolveSibling("shared").resolve("models");
            if (Files.isDirectory(p)) {
                return p;
            }
        }
        return null;
    }

    /** The given path, or the default file in the shared models directory. */
    static Path resolve(Path given, String defaultName, String flag) {
        if (given != null) {
            return given;
        }
        Path models = sharedModels();
        if (models == null || !Files.exists(models.resolve(defaultName))) {
            throw new BadInputException("no " + flag + " given and no default ../shared/models/" + defaultName
                    + " beside the project root; pass " + flag + " FILE");
        }
        return models.resolve(defaultName);
    }
}
