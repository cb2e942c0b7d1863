package io.kvtier.cli;

import io.kvtier.model.CheckpointWriter;
import io.kvtier.model.DigestCache;
import io.kvtier.model.ModelConfig;
import io.kvtier.tier.disk.FileTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The warm-up's random model (stories260K's shape, {@link AotTrainingCommand#SHAPE}) and tokenizer,
 * written once and kept in kvtier's cache directory ({@code <cache>/warm-up}, next to the model
 * digests), with the model's digest remembered there too.
 *
 * <p>Why kept: writing the model (a million Gaussian floats) and hashing it for its model id ran
 * in the interpreter at every start, on the warm-up's thread before its first step (and left one
 * digest entry per run for a temporary path in the digest cache): about 0.7 s from the warm-up's
 * start to its first token, against about 0.2 s with the files kept. Each file is written to a
 * temporary name and moved into place, so a concurrent start sees the whole file or none; the
 * names carry {@link #VERSION}, so a format change writes new files. A warm-up that fails on kept
 * files calls {@link #forget} so that the next start writes them again.
 */
final class WarmupFiles {

    /** Part of the file names: raise it when the model or tokenizer the warm-up writes changes. */
    static final int VERSION = 1;

    private final Path dir;

    /** Files in {@code dir} (created when first written). */
    WarmupFiles(Path dir) {
        this.dir = dir;
    }

    /** The files in kvtier's cache directory ({@link DigestCache#cacheHome()}/warm-up). */
    static WarmupFiles inCacheHome() {
        return new WarmupFiles(DigestCache.cacheHome().resolve("warm-up"));
    }

    Path model() {
        return dir.resolve("model-260k-v" + VERSION + ".bin");
    }

    Path tokenizer() {
        return dir.resolve("tok512-v" + VERSION + ".bin");
    }

    /** Where the model's digest is remembered (an entry per kept model, not one per run). */
    DigestCache digests() {
        return new DigestCache(dir.resolve("digests"));
    }

    /**
     * Writes whichever file is missing.
     *
     * @return true when both were already there (nothing written)
     * @throws IOException when the directory or a file cannot be written
     */
    boolean ensure() throws IOException {
        ModelConfig shape = AotTrainingCommand.SHAPE;
        boolean modelKept = writeUnlessThere(model(), tmp -> CheckpointWriter.writeRandom(tmp, shape, 1));
        boolean tokenizerKept = writeUnlessThere(tokenizer(),
                tmp -> Files.write(tmp, AotTrainingCommand.tokenizer(shape.vocabSize())));
        return modelKept && tokenizerKept;
    }

    private interface Writer {
        void write(Path file) throws IOException;
    }

    /** True when {@code target} exists; else writes it through a temporary file moved into place. */
    private boolean writeUnlessThere(Path target, Writer writer) throws IOException {
        if (Files.isRegularFile(target)) {
            return true;
        }
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, target.getFileName().toString(), ".tmp");
        try {
            writer.write(tmp);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
        return false;
    }

    /** Deletes the kept files (after a failure on them: the next start writes them again). */
    void forget() {
        FileTrees.deleteQuietly(dir);
    }
}
