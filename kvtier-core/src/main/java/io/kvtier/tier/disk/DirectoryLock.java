package io.kvtier.tier.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The lock that makes one {@link DiskStore} the owner of a namespace directory: an OS lock
 * ({@link FileChannel#tryLock()}, a POSIX record lock on Linux) on {@code <namespace dir>/.lock},
 * never the file's existence. The OS drops the lock when the process dies, so a crashed owner
 * leaves nothing to clean up.
 *
 * <p>An OS lock belongs to a file, not to a name: if {@code .lock} is deleted or replaced, the
 * holder keeps a lock on a file nobody else sees, and the next process would lock the new file.
 * So a new holder checks that the name led to the same file (device and inode, by {@code stat})
 * before its open and after its lock (else the file was swapped meanwhile, and it tries again),
 * and {@link #stillHeld} (called before every write and delete) checks that the name still leads
 * to the locked file; when it does not, the holder locks whatever file now has the name, or gives
 * up ownership if another process holds that one. Two processes therefore never both write and
 * evict for longer than one file operation. The holder writes its pid into the file (through the
 * locked channel: closing any other descriptor of the file would drop a POSIX lock), so that a
 * process that finds the lock held can say who holds it.
 *
 * <p>POSIX locks belong to the whole process, so a second lock of the same directory in this JVM
 * would succeed silently: a JVM-wide map allows one holder per directory. Thread-safe.
 */
final class DirectoryLock {

    /** Lock holders of this JVM by namespace directory. */
    private static final ConcurrentHashMap<Path, DirectoryLock> HOLDERS = new ConcurrentHashMap<>();
    private static final System.Logger LOG = System.getLogger(DirectoryLock.class.getName());

    private final DiskLayout layout;
    private final PidWrite pidWrite;
    private FileChannel channel;
    private FileLock lock;
    private Object fileKey;
    private volatile String failure;

    DirectoryLock(DiskLayout layout) {
        this(layout, (ch, text) -> {
            ch.truncate(0);
            ch.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII)), 0);
        });
    }

    /** @param pidWrite how the holder's pid is written into the locked file (a test fakes a full disk there) */
    DirectoryLock(DiskLayout layout, PidWrite pidWrite) {
        this.layout = layout;
        this.pidWrite = pidWrite;
    }

    /** Writes the holder's line into the locked {@code .lock} file. */
    @FunctionalInterface
    interface PidWrite {
        void write(FileChannel ch, String text) throws IOException;
    }

    /**
     * Takes the lock if nobody holds it.
     *
     * @return whether this instance holds it now; if not, {@link #failure()} says why in one line
     */
    synchronized boolean tryAcquire() {
        if (lock != null) {
            return true;
        }
        Path dir = layout.namespaceDir();
        if (HOLDERS.putIfAbsent(dir, this) != null) {
            failure = "disk cache " + dir + " is owned by another disk tier of this process; this one only reads it";
            return false;
        }
        try {
            if (lockCurrentFile()) {
                return true;
            }
        } catch (IOException | OverlappingFileLockException e) {
            failure = cannotWrite("", e);
        }
        HOLDERS.remove(dir, this);
        return false;
    }

    /** Locks the file now named {@code .lock}; true if this instance then holds the lock of exactly that file. */
    private boolean lockCurrentFile() throws IOException {
        Path path = layout.requireInside(layout.lockFile());
        for (int attempt = 0; attempt < 8; attempt++) {
            try {
                Files.createFile(path);
            } catch (FileAlreadyExistsException e) {
                // someone's lock file, maybe held: tried next
            }
            Object before = fileKey(path);
            FileChannel ch;
            try {
                ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            } catch (NoSuchFileException e) {
                continue; // deleted between create and open
            }
            FileLock l;
            try {
                l = ch.tryLock();
            } catch (IOException | RuntimeException e) {
                closeQuietly(ch);
                throw e;
            }
            if (l == null) {
                String holder = read(path);
                closeQuietly(ch);
                String[] words = holder.trim().split(" ");
                failure = "disk cache " + layout.namespaceDir() + " is in use by "
                        + (words.length > 1 && words[0].equals("pid") ? "process " + words[1] : "another process")
                        + " (it holds " + DiskLayout.LOCK_FILE + "); this process only reads it";
                return false;
            }
            // The name named one file before the open and after the lock: the locked file is that
            // one (a swap and a swap back would need its inode reused in between).
            if (before != null && before.equals(fileKey(path))) {
                try {
                    pidWrite.write(ch, "pid " + DiskStore.PID + " " + DiskStore.PROCESS_TAG + "\n");
                } catch (IOException e) {
                    closeQuietly(ch); // else the lock stayed held by a store that does not own: the next process only read too
                    throw e;
                }
                channel = ch;
                lock = l;
                fileKey = before;
                failure = null;
                return true;
            }
            closeQuietly(ch); // deleted or replaced meanwhile: this lock guards nothing
        }
        failure = "disk cache " + layout.namespaceDir() + ": " + DiskLayout.LOCK_FILE
                + " keeps being replaced; this process only reads it";
        return false;
    }

    /**
     * The file key (device and inode) the name leads to, or null if there is no such file. A
     * stat, never an open: closing any descriptor of the locked file would drop this process's
     * POSIX lock on it.
     */
    private static Object fileKey(Path path) {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Whether this instance holds the lock of the file named {@code .lock}. If that file was
     * deleted or replaced, locks whatever file now has the name; if another process holds that
     * one, releases everything and answers false (logged in one line).
     */
    synchronized boolean stillHeld() {
        if (lock == null) {
            return false;
        }
        if (fileKey.equals(fileKey(layout.lockFile()))) {
            return true;
        }
        dropLock();
        try {
            if (lockCurrentFile()) {
                return true;
            }
        } catch (IOException | OverlappingFileLockException e) {
            failure = cannotWrite(" again", e);
        }
        HOLDERS.remove(layout.namespaceDir(), this);
        LOG.log(System.Logger.Level.WARNING, DiskLayout.LOCK_FILE + " was deleted or replaced: " + failure);
        return false;
    }

    /**
     * Why the lock file could not be made, opened or written: the tier cannot write in the directory,
     * for the operating system's reason ({@code No space left on device}, {@code Read-only file system}).
     * It said "this process only reads it", as when another process owns the directory: on a full
     * disk, of a directory just made, with nothing in it to read.
     */
    private String cannotWrite(String again, Exception e) {
        return "disk cache " + layout.namespaceDir() + ": cannot write its lock file " + DiskLayout.LOCK_FILE + again + " ("
                + DiskStore.causeOf(e) + "), so the disk tier stores nothing there"
                + (holdsMoreThanTheLock() ? "; it reads the chunks already in it" : " (it holds no chunks to read)");
    }

    /** Whether the namespace directory holds anything but {@code .lock} (shard directories of chunk files). */
    private boolean holdsMoreThanTheLock() {
        try (java.util.stream.Stream<Path> entries = Files.list(layout.namespaceDir())) {
            return entries.anyMatch(p -> !p.getFileName().toString().equals(DiskLayout.LOCK_FILE));
        } catch (IOException | java.io.UncheckedIOException e) {
            return false;
        }
    }

    /** Why the last {@link #tryAcquire} or {@link #stillHeld} failed, one line; null while held. */
    String failure() {
        return failure;
    }

    /** Releases the lock if held. */
    synchronized void release() {
        if (lock != null) {
            dropLock();
            HOLDERS.remove(layout.namespaceDir(), this);
        }
    }

    private void dropLock() {
        try {
            lock.release();
        } catch (IOException e) {
            // closing the channel releases it
        }
        closeQuietly(channel);
        lock = null;
        channel = null;
        fileKey = null;
    }

    private static String read(Path path) {
        try {
            byte[] b = Files.readAllBytes(path);
            return new String(b, 0, Math.min(b.length, 200), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return "";
        }
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // nothing to do
        }
    }
}
