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
 * Maps a model file read-only (a read-only mapped segment) for its whole life: one shared {@link Arena} per file, owned by
 * the object the parser returns (closing it unmaps the file), closed here when opening or
 * parsing fails. Used by both model formats (llama2.c checkpoints, GGUF).
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
        if (Files.isDirectory(path)) {
            throw new ModelFormatException(name + ": is a directory, expected " + expected);
        }
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            MemorySegment mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            return parser.parse(arena, mapped);
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

    /**
     * The same mapped bytes, seen as an ordinary native segment of the same arena
     * (closing the arena still unmaps them). Why: the kernels read weights and the KV slab (a
     * plain native segment) through the same JDK load paths, whose type profiles then saw two
     * segment classes; with one class the JIT's inlining of vector loads no longer depended on
     * which was seen first (measured: 15M single-sequence decode 170 -> 290+ tok/s after the tiny
     * model had run in the same JVM). Needs native access (--enable-native-access); without it
     * the mapped segment is used as is. (GGUF files keep the mapped segment: in one try the
     * switch changed the last bits of GgufWriterTest's F32-versus-checkpoint comparison.)
     */
    public static MemorySegment asPlainNative(MemorySegment mapped, Arena arena) {
        Module self = MappedFiles.class.getModule();
        if (!self.isNativeAccessEnabled()) {
            return mapped;
        }
        return MemorySegment.ofAddress(mapped.address()).reinterpret(mapped.byteSize(), arena, null);
    }
}
