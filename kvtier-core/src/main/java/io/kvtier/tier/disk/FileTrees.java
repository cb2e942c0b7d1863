package io.kvtier.tier.disk;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Deletes a directory tree, tolerantly: the one recursive delete of the main sources (bench scratch
 * dirs, warm-up dirs, the AOT training dir). A path that vanished meanwhile (another thread or
 * process deleted it first) is not an error; a path that stays and cannot be deleted is.
 */
public final class FileTrees {
    private FileTrees() {
    }

    /**
     * Deletes {@code root} and everything below it, each directory after its entries. Does nothing
     * when {@code root} does not exist; follows no symbolic links (a link is deleted, not what it
     * points to).
     *
     * @throws IOException when a path cannot be deleted (permissions; a file created into a
     *     directory after its entries were deleted: the directory is then not empty)
     */
    public static void delete(Path root) throws IOException {
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE; // gone already: what we wanted
                }
                throw e;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                if (e != null && !(e instanceof NoSuchFileException)) {
                    throw e;
                }
                Files.deleteIfExists(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /**
     * {@link #delete}, but a failure leaves the rest behind instead of throwing: for temporary
     * directories whose leftovers are harmless.
     *
     * @return whether {@code root} is gone afterwards
     */
    public static boolean deleteQuietly(Path root) {
        try {
            delete(root);
        } catch (IOException | UncheckedIOException leftBehind) {
            // best effort, as asked; the check below says how it went
        }
        return !Files.exists(root, LinkOption.NOFOLLOW_LINKS);
    }
}
