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
 * Reads a model file (a GGUF file or a llama2.c checkpoint) whole into off-heap memory of this
 * process, once, for its whole life: one shared {@link Arena} per file, owned by the object the
 * parser returns (closing it frees the bytes), closed here when opening or parsing fails. Never
 * a mapping: see {@link #read} (docs/gguf.md, "Read, not mapped").
 */
public final class OffHeapFiles {

    private OffHeapFiles() {
    }

    /** Builds the owner of a file's bytes from its arena and bytes; throws {@link ModelFormatException} on bad content. */
    @FunctionalInterface
    public interface Parser<T> {
        T parse(Arena arena, MemorySegment file);
    }

    /**
     * Checks a file's first bytes before the whole file is read into memory; throws
     * {@link ModelFormatException} when they cannot start the expected format.
     */
    @FunctionalInterface
    public interface HeadCheck {
        /**
         * @param head the file's first bytes (as many as {@link #read} was asked for)
         * @param size the file's size in bytes
         */
        void check(MemorySegment head, long size);
    }

    /**
     * Reads {@code path} whole into fresh off-heap memory and hands it to {@code parser}, after
     * {@code head} has passed its first {@code headBytes} bytes (a file shorter than that goes
     * straight to the parser, which says why it is too short): a large file that is no model is
     * refused by its header, not after it has been read (2 GB of zeros took 10 s and 2.3 GB
     * resident; 50 GB was refused as "not enough memory"). Why not a
     * mapping: a file changed under a mapping changes the weights mid-run, and one truncated under
     * it kills the JVM with SIGBUS (a private copy-on-write mapping shares the file's pages until
     * written, so it does not protect either). Once read, nothing done to the file matters. The
     * bytes are a plain native segment, like the KV slab, which keeps the JIT's vector loads
     * monomorphic.
     *
     * @param name     the file as messages name it ("model file x.bin")
     * @param expected what the file should be, for the directory and empty-file messages ("a GGUF file")
     * @throws ModelFormatException when the file is a directory, not a regular file, missing,
     *         unreadable or empty, when {@code head} refuses its start, when its size or
     *         modification time changes while it is read (the copy could mix two versions), or
     *         when the parser rejects it
     */
    public static <T> T read(Path path, String name, String expected, int headBytes, HeadCheck head, Parser<T> parser) {
        requireNotDirectoryOrEmpty(path, name, expected);
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size == 0) {
                throw new ModelFormatException(name + ": is empty (0 bytes), expected " + expected);
            }
            java.nio.ByteBuffer first = java.nio.ByteBuffer.allocate(headBytes);
            if (size >= headBytes && readFully(ch, first, 0)) {
                head.check(MemorySegment.ofArray(first.array()), size);
            }
            return parser.parse(arena, readAll(name, path, ch, arena));
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
     * Up to {@code n} bytes from the start of {@code path}, for the checks that look at a file's
     * header before a load (which format, how many KV groups, the vocabulary size).
     *
     * @return the bytes (fewer for a shorter file), or null when {@code path} is not a regular
     *         file (never opened: a FIFO's open blocks until a writer comes, which hung every
     *         command) or cannot be read; the load then says why
     */
    public static byte[] firstBytes(Path path, int n) {
        if (!Files.isRegularFile(path)) {
            return null;
        }
        try (var in = Files.newInputStream(path)) {
            return in.readNBytes(n);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Refuses a directory, anything but a regular file (a FIFO, a device: never opened) or an
     * empty regular file with the words every model and tokenizer file uses; a missing or
     * unreadable file passes (its open says why).
     *
     * @param name     the file as messages name it ("model file x.bin")
     * @param expected what the file should be ("a GGUF file")
     * @throws ModelFormatException when {@code path} is a directory, not a regular file, or an empty regular file
     */
    public static void requireNotDirectoryOrEmpty(Path path, String name, String expected) {
        if (Files.isDirectory(path)) {
            throw new ModelFormatException(name + ": is a directory, expected " + expected);
        }
        if (Files.exists(path) && !Files.isRegularFile(path)) {
            // A FIFO's open blocks until a writer comes, and a device never ends: refused unopened.
            throw new ModelFormatException(name + ": is not a regular file (a pipe, device or socket), expected " + expected);
        }
        try {
            if (Files.isRegularFile(path) && Files.size(path) == 0) {
                throw new ModelFormatException(name + ": is empty (0 bytes), expected " + expected);
            }
        } catch (IOException e) {
            // unreadable: the caller's open says why
        }
    }

    /**
     * Fills {@code buf} from the file's byte {@code pos} on, read after read (a read may return
     * fewer bytes); false when the file ends first.
     */
    private static boolean readFully(FileChannel ch, java.nio.ByteBuffer buf, long pos) throws IOException {
        while (buf.hasRemaining()) {
            if (ch.read(buf, pos + buf.position()) < 0) {
                return false;
            }
        }
        return true;
    }

    private static MemorySegment readAll(String name, Path path, FileChannel ch, Arena arena) throws IOException {
        long size = ch.size();
        java.nio.file.attribute.FileTime before = Files.getLastModifiedTime(path);
        MemorySegment file = io.kvtier.memory.ReservedMemory.reserveHugePages(arena, size);
        long piece = 64L << 20;
        for (long off = 0; off < size; ) {
            java.nio.ByteBuffer buf = file.asSlice(off, Math.min(piece, size - off)).asByteBuffer();
            if (!readFully(ch, buf, off)) {
                // The new size, not how far the read had come (a 1.5 GB file cut to 1 MB was said to be 1.4 GB).
                throw new ModelFormatException(name + ": shrank from " + size + " to " + ch.size()
                        + " bytes while being read; try again once it is written");
            }
            off += buf.capacity();
        }
        if (ch.size() != size || !Files.getLastModifiedTime(path).equals(before)) {
            throw new ModelFormatException(name + ": changed while being read; try again once it is written");
        }
        return file;
    }
}
