package io.kvtier.model;

import io.kvtier.model.gguf.GgufFile;
import io.kvtier.model.gguf.GgufModel;
import java.nio.file.Path;

/** Opens a model file of either format, recognised by its content (the {@code GGUF} magic), not its name. */
public final class Models {

    private static final String EITHER = "a GGUF file or a llama2.c checkpoint";

    private Models() {
    }

    /**
     * A GGUF model when the file starts with {@code GGUF}, else a llama2.c checkpoint; the
     * model's digest is cached in {@link DigestCache#defaultCache()}.
     *
     * @throws ModelFormatException (one line naming the file) when it is neither, or malformed
     */
    public static Model load(Path path) {
        return load(path, DigestCache.defaultCache());
    }

    /** The same with the model's digest cached in {@code digests}. */
    public static Model load(Path path, DigestCache digests) {
        // Format-neutral messages for what is neither format's fault ("" would resolve to the working directory).
        if (path.toString().isEmpty()) {
            throw new ModelFormatException("model file: empty path");
        }
        OffHeapFiles.requireNotDirectoryOrEmpty(path, "model file " + path, EITHER);
        if (GgufFile.isGguf(path)) {
            return GgufModel.load(path, digests);
        }
        try {
            return Checkpoint.load(path, digests);
        } catch (ModelFormatException e) {
            String start = GgufFile.damagedMagic(path);
            if (start == null) {
                throw e;
            }
            // A GGUF file whose magic was damaged would otherwise be judged as a llama2.c header only.
            throw new ModelFormatException("model file " + path + ": starts with '" + start + "', not the GGUF magic 'GGUF'"
                    + " (a damaged GGUF file?), and is no llama2.c checkpoint either", e);
        }
    }

    /** Bytes of a GGUF file's start read by {@link #kvGroupCountFromHeader}: more than any known metadata (a 256K vocabulary ~10 MB). */
    public static final int HEADER_BYTES = 32 << 20;

    /**
     * How many KV groups the model in {@code file} has, from its header only (for a check before a
     * long load): 1 for a llama2.c checkpoint, the GGUF metadata's answer
     * ({@link io.kvtier.model.gguf.GgufSpecs#kvGroupCount}) for a GGUF file.
     *
     * @return the count, or 0 when the header cannot tell (malformed, unreadable: the load then says why)
     */
    public static int kvGroupCountFromHeader(Path file) {
        if (!GgufFile.isGguf(file)) {
            return 1;
        }
        var md = GgufFile.readHeader(file, HEADER_BYTES);
        if (md == null) {
            return 0;
        }
        try {
            return io.kvtier.model.gguf.GgufSpecs.kvGroupCount(file.toString(), md);
        } catch (RuntimeException e) {
            return 0;
        }
    }
}
