package io.kvtier.model;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Opens a model file for its whole life, either mapped read-only ({@link #map}, GGUF) or read once
 * into off-heap memory of this process ({@link #read}, llama2.c checkpoints): one shared
 * {@link Arena} per file, owned by the object the parser returns (closing it frees the bytes),
 * closed here when opening or parsing fails.
 */
public final class MappedFiles {

    private MappedFiles() {
    }

    /** Builds the owner of a mapped file from its arena and bytes; throws {@link ModelFormatException} on bad content. */
    @FunctionalInterface
    public interface Parser<T> {
        T parse(Arena arena, MemorySegment file);
    }

    /**
     * Maps {@code path} and hands it to {@code parser}.
     *
     * @param name     the file as messages name it ("model file x.bin")
     * @param expected what the file should be, for the directory message ("a GGUF file")
     * @throws ModelFormatException when the file is a directory, missing or unreadable, or the
     *         parser rejects it
     */
    public static <T> T map(Path path, String name, String expected, Parser<T> parser) {
        return open(path, name, expected, parser, (ch, arena) -> ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena));
    }

    /**
     * Reads {@code path} whole into fresh off-heap memory and hands it to {@code parser}. Why not a
     * mapping: a file changed under a mapping changes the weights mid-run, and one truncated under
     * it kills the JVM with SIGBUS (a private copy-on-write mapping shares the file's pages until
     * written, so it does not protect either). Once read, nothing done to the file matters. The
     * bytes are a plain native segment, like the KV slab, which keeps the JIT's vector loads
     * monomorphic.
     *
     * @throws ModelFormatException as {@link #map}, and when the file's size or modification time
     *         changes while it is read (the copy could mix two versions)
     */
    public static <T> T read(Path path, String name, String expected, Parser<T> parser) {
        return open(path, name, expected, parser, (ch, arena) -> readAll(name, path, ch, arena));
    }

    @FunctionalInterface
    private interface Loader {
        MemorySegment load(FileChannel ch, Arena arena) throws IOException;
    }

    private static <T> T open(Path path, String name, String expected, Parser<T> parser, Loader loader) {
        if (Files.isDirectory(path)) {
            throw new ModelFormatException(name + ": is a directory, expected " + expected);
        }
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            return parser.parse(arena, loader.load(ch, arena));
        } catch (NoSuchFileException e) {
            arena.close();
            throw new ModelFormatException(name + ": not found", e);
        } catch (IOException e) {
            arena.close();
            throw new ModelFormatException(name + ": cannot be read (" + e + ")", e);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    private static MemorySegment readAll(String name, Path path, FileChannel ch, Arena arena) throws IOException {
        long size = ch.size();
        java.nio.file.attribute.FileTime before = Files.getLastModifiedTime(path);
        MemorySegment file = io.kvtier.memory.ReservedMemory.reserve(arena, size);
        long piece = 64L << 20;
        for (long off = 0; off < size; ) {
            java.nio.ByteBuffer buf = file.asSlice(off, Math.min(piece, size - off)).asByteBuffer();
            while (buf.hasRemaining()) {
                if (ch.read(buf, off + buf.position()) < 0) {
                    throw new ModelFormatException(name + ": shrank to " + (off + buf.position()) + " bytes while being read");
                }
            }
            off += buf.capacity();
        }
        if (ch.size() != size || !Files.getLastModifiedTime(path).equals(before)) {
            throw new ModelFormatException(name + ": changed while being read; try again once it is written");
        }
        return file;
    }
}
