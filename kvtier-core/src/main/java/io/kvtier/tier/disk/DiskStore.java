package io.kvtier.tier.disk;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The disk tier's data path: one file per chunk, {@link ChunkHeader} then payload, published
 * atomically, verified on every read. Thread-safe: called from the transfer threads; it keeps no
 * index (the tier's bookkeeping is a {@code TierIndex} on the engine thread).
 *
 * <p>File format: bytes {@code [0, H)} are the chunk header exactly as {@link ChunkHeader}
 * encodes it ({@code H = 128 + 4 * tokens}), bytes {@code [H, H + payloadLength)} the payload; the
 * file is exactly {@code H + payloadLength} bytes ({@link DiskCapacity#fileBytes}).
 *
 * <p>Ownership (see the package documentation): the store that holds the namespace
 * directory's lock is the {@link Role#OWNER} and the only one that writes and deletes; other
 * stores on the same directory, in this or another process, are {@link Role#READER}s, whose
 * writes fail and whose deletes do nothing. Reads work in both roles.
 *
 * <p>Nothing outside {@code <root>/<namespace hex>} is written or deleted: every such path goes
 * through {@link DiskLayout#requireInside}, and shard directories that are symbolic links (or not
 * directories) are refused.
 */
public final class DiskStore implements AutoCloseable {

    /** What a store may do in its namespace directory. */
    public enum Role {
        /** Holds the directory lock: reads, writes, deletes, cleans up after a restart. */
        OWNER,
        /** Another store owns the directory: reads only. */
        READER
    }

    /**
     * Payload bytes per piece of a read ({@link PieceRead}): what the reading thread and the
     * {@link ReadHelper} share out, each piece one positional read and one checksum. Measured
     * on the reference machine (median read over plain read, 256 KiB / 1 MiB / 4 MiB chunks):
     * 64 KiB pieces 68-83% / 83-89% / 84-93%, 128 KiB 68-87% / 90-96% / 98-101%, one piece (no
     * helper) 62-65% / 63-67% / 68-70%. Below two pieces the reader works alone.
     * Public for the disk benchmark, whose warm-up reads span two pieces.
     */
    public static final int READ_PIECE = 128 << 10;

    private static final ReadHelper HELPER = ReadHelper.get();

    static final AtomicLong TEMP_SEQ = new AtomicLong();
    static final long PID = ProcessHandle.current().pid();
    /** Tag of this process's temporary files: pid, "x", a random 32-bit hex number. */
    static final String PROCESS_TAG = PID + "x" + Integer.toHexString(new java.security.SecureRandom().nextInt());
    private static final System.Logger LOG = System.getLogger(DiskStore.class.getName());
    private static final ThreadLocal<ByteBuffer> SCRATCH = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(4096));

    /** {@link #warnWriteFailures}'s sink and the causes it was told (the disk thread writes). */
    private volatile java.util.function.Consumer<String> warn;
    private final java.util.Set<String> warnedCauses = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final DiskLayout layout;
    private final DiskFsync fsync;
    private final AtomicIntegerArray shardReady = new AtomicIntegerArray(256);
    private final Object[] stripes = new Object[64];
    private volatile Role role = Role.READER;
    private final DirectoryLock dirLock;
    private volatile boolean closed;

    private DiskStore(DiskLayout layout, DiskFsync fsync) {
        this.layout = layout;
        this.fsync = fsync;
        this.dirLock = new DirectoryLock(layout);
        for (int i = 0; i < stripes.length; i++) {
            stripes[i] = new Object();
        }
    }

    /**
     * Opens the store of {@code namespace} under {@code root}, creating
     * {@code <root>/<namespace hex>} if needed, and tries to become its {@link Role#OWNER}.
     *
     * @param root      the configured directory ({@code --disk-cache-dir}); created if absent
     * @param namespace the engine's namespace digest
     * @param fsync     what a write forces to disk ({@code --disk-fsync})
     * @throws IOException if the directories cannot be created, or the namespace directory is a
     *                     symbolic link or not a directory
     */
    public static DiskStore open(Path root, BlockKey namespace, DiskFsync fsync) throws IOException {
        Objects.requireNonNull(fsync, "fsync");
        Files.createDirectories(root);
        DiskLayout layout = new DiskLayout(root.toRealPath(), namespace);
        Path ns = layout.namespaceDir();
        try {
            Files.createDirectory(ns);
        } catch (FileAlreadyExistsException e) {
            // fine if it is a real directory, checked next
        }
        if (!Files.isDirectory(ns, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("disk cache " + ns + " is not a directory (or is a symbolic link); the disk tier "
                    + "writes only inside its own directories");
        }
        DiskStore store = new DiskStore(layout, fsync);
        store.tryBecomeOwner();
        return store;
    }

    /**
     * Tries to take the namespace directory's lock if this store does not hold it (e.g. the owning
     * process has exited). A store that becomes owner does not know the files written meanwhile
     * by the former owner: run a {@link DiskIndexScan} to adopt them. Why it failed:
     * {@link #readOnlyReason()}.
     *
     * @return whether this store is now the owner
     */
    public synchronized boolean tryBecomeOwner() {
        if (role == Role.OWNER || closed) {
            return role == Role.OWNER;
        }
        if (dirLock.tryAcquire()) {
            role = Role.OWNER;
        }
        return role == Role.OWNER;
    }

    /** Whether this store is the owner and its lock still guards the directory ({@link DirectoryLock#stillHeld}). */
    private boolean stillOwner() {
        if (role != Role.OWNER) {
            return false;
        }
        synchronized (this) {
            if (role == Role.OWNER && !closed && !dirLock.stillHeld()) {
                role = Role.READER;
            }
            return role == Role.OWNER && !closed;
        }
    }

    /**
     * Why this store only reads (one line for the user: which process holds the lock, or why the
     * lock file cannot be created, e.g. a read-only directory); null for the owner.
     */
    public String readOnlyReason() {
        return role == Role.OWNER ? null : closed ? "disk cache " + layout.namespaceDir() + " is closed"
                : dirLock.failure();
    }

    /** This store's role. */
    public Role role() {
        return role;
    }

    /** Whether {@link #write} and {@link #delete} act (this store is the owner and open). */
    public boolean writable() {
        return role == Role.OWNER && !closed;
    }

    /** The directory layout. */
    public DiskLayout layout() {
        return layout;
    }

    /** The fsync policy of writes. */
    public DiskFsync fsync() {
        return fsync;
    }

    /** The namespace digest every file of this store carries. */
    public BlockKey namespace() {
        return layout.namespace();
    }

    /**
     * Publishes a chunk file atomically: writes header and payload to a temporary file in the
     * key's directory, forces it per the {@link DiskFsync} policy, renames it to
     * {@code <key hex>.kvc} (replacing an older file of the key), and with
     * {@link DiskFsync#DATA_AND_DIR} forces the directory. The header is written as given (the
     * caller computed its CRC32C, e.g. when the chunk entered the host tier); this method does
     * not read the payload except to write it.
     *
     * @param key     the chunk key; must equal {@code header.key()}
     * @param header  the chunk's header; its namespace must be this store's and its payload length
     *                {@code payload.byteSize()}
     * @param payload the chunk's KV bytes (a native segment readable from this thread, for speed)
     * @return {@link DiskWrite.Written}, or {@link DiskWrite.Failed} for an I/O error or a store
     *         that is not the owner; never a visible partial file, no temporary file left behind
     * @throws IllegalArgumentException if key, namespace or payload length disagree with the header
     */
    public DiskWrite write(BlockKey key, ChunkHeader header, MemorySegment payload) {
        if (!header.key().equals(key)) {
            throw new IllegalArgumentException("disk write of key " + key.shortHex() + " with a header of key "
                    + header.key().shortHex());
        }
        if (!header.namespace().equals(layout.namespace())) {
            throw new IllegalArgumentException("disk write of key " + key.shortHex() + ": header namespace "
                    + header.namespace().shortHex() + ", this store's is " + layout.namespace().shortHex());
        }
        if (header.payloadLength() != payload.byteSize()) {
            throw new IllegalArgumentException("disk write of key " + key.shortHex() + ": header says "
                    + header.payloadLength() + " payload bytes, the payload has " + payload.byteSize());
        }
        if (!writable() || !stillOwner()) {
            return new DiskWrite.Failed("disk tier " + layout.namespaceDir() + " is " + (closed ? "closed" :
                    "owned by another engine (this one only reads)") + "; chunk " + key.shortHex() + " not written");
        }
        long start = System.nanoTime();
        int shard = DiskLayout.shardOf(key);
        Path target = layout.requireInside(layout.fileOf(key));
        Path temp = layout.requireInside(layout.tempFileOf(key, PROCESS_TAG, TEMP_SEQ.incrementAndGet()));
        long fileBytes = header.encodedSize() + payload.byteSize();
        try {
            MemorySegment h = scratch(header.encodedSize());
            header.writeTo(h, 0);
            try (FileChannel ch = createTemp(shard, temp)) {
                writeFully(ch, h, payload);
                if (fsync != DiskFsync.NONE) {
                    ch.force(false);
                }
            }
            synchronized (stripe(key)) {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
            }
            if (fsync == DiskFsync.DATA_AND_DIR) {
                try (FileChannel dir = FileChannel.open(target.getParent(), StandardOpenOption.READ)) {
                    dir.force(true);
                }
            }
            return new DiskWrite.Written(fileBytes, System.nanoTime() - start);
        } catch (IOException | RuntimeException e) {
            deleteQuietly(temp);
            if (e instanceof IllegalArgumentException iae) {
                throw iae;
            }
            warnOnce(e);
            return new DiskWrite.Failed("disk write of chunk " + key.shortHex() + " to " + target + " failed: "
                    + describe(e));
        }
    }

    private FileChannel createTemp(int shard, Path temp) throws IOException {
        if (shardReady.get(shard) == 0) {
            prepareShard(shard);
        }
        try {
            return FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        } catch (NoSuchFileException e) {
            shardReady.set(shard, 0); // the directory went away: make it again, once
            prepareShard(shard);
            return FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        }
    }

    private void prepareShard(int shard) throws IOException {
        Path dir = layout.requireInside(layout.shardDir(shard));
        try {
            Files.createDirectory(dir);
        } catch (FileAlreadyExistsException e) {
            // checked next
        }
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException(dir + " is not a directory (or is a symbolic link)");
        }
        shardReady.set(shard, 1);
    }

    private static void writeFully(FileChannel ch, MemorySegment header, MemorySegment payload) throws IOException {
        int slices = (int) ((payload.byteSize() + ChunkHeader.BUFFER_SLICE - 1) / ChunkHeader.BUFFER_SLICE);
        ByteBuffer[] bufs = new ByteBuffer[1 + slices];
        bufs[0] = header.asByteBuffer();
        for (int i = 0; i < slices; i++) {
            long at = (long) i * ChunkHeader.BUFFER_SLICE;
            bufs[1 + i] = payload.asSlice(at, Math.min(ChunkHeader.BUFFER_SLICE, payload.byteSize() - at)).asByteBuffer();
        }
        int first = 0;
        while (first < bufs.length) {
            ch.write(bufs, first, bufs.length - first);
            while (first < bufs.length && !bufs[first].hasRemaining()) {
                first++;
            }
        }
    }

    /**
     * Reads and verifies the chunk of {@code key} into {@code dst}: the header must be a valid
     * header of this store's namespace with the expected key, parent, token ids and a payload
     * length of {@code dst.byteSize()}, the file exactly header + payload bytes, and the payload's
     * CRC32C the header's. The payload is read straight into {@code dst} (for a native segment, no
     * intermediate copy) in pieces of {@link #READ_PIECE} bytes, each read and checksummed by this
     * thread or by the {@link ReadHelper} (whichever is free), the piece checksums combined. When
     * this method returns, no thread writes {@code dst} any more, whatever the result.
     *
     * @param key    chunk key
     * @param parent expected parent key
     * @param tokens expected token ids of the chunk
     * @param dst    where the payload goes; its size is the expected payload length. Its bytes are
     *               unspecified unless the result is {@link DiskRead.Ok}
     * @return Ok with the stored header, Missing if there is no file, Corrupt (with the reason)
     *         for any other problem, read errors included; never throws for bad data
     */
    public DiskRead read(BlockKey key, BlockKey parent, int[] tokens, MemorySegment dst) {
        Path file = layout.fileOf(key);
        long size;
        FileChannel ch;
        try {
            // lstat first: opening a named pipe would block, and a link is never ours. Its size
            // serves as the file's (a file replaced meanwhile is a complete chunk, or fails below).
            BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attrs.isRegularFile()) {
                return new DiskRead.Corrupt(file + ": not a regular file (a link, directory, pipe or device); not opened");
            }
            size = attrs.size();
            ch = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return new DiskRead.Missing();
        } catch (IOException | RuntimeException e) {
            return new DiskRead.Corrupt(file + ": cannot open: " + describe(e));
        }
        try (ch) {
            long headerBytes = ChunkHeader.encodedSize(tokens.length);
            long payloadBytes = dst.byteSize();
            MemorySegment h = scratch(Math.min(headerBytes, size));
            if (size != headerBytes + payloadBytes) {
                readFully(ch, h.asByteBuffer());
                expectedHeader(h, size, key, parent, tokens, payloadBytes); // a wrong header is the better reason
                return new DiskRead.Corrupt(file + ": " + size + " bytes, expected " + (headerBytes + payloadBytes)
                        + " (header " + headerBytes + " + payload " + payloadBytes + "): truncated or extended");
            }
            return readVerified(ch, size, h, key, parent, tokens, dst);
        } catch (BadChunk e) {
            return new DiskRead.Corrupt(file + ": " + e.getMessage());
        } catch (IOException | RuntimeException e) {
            return new DiskRead.Corrupt(file + ": read error: " + describe(e));
        }
    }

    /**
     * Header and payload of a file of the right size: the header and piece 0 in one readv, the
     * other pieces by this thread and the {@link ReadHelper} side by side ({@link PieceRead}).
     */
    private DiskRead readVerified(FileChannel ch, long size, MemorySegment h, BlockKey key, BlockKey parent,
                                  int[] tokens, MemorySegment dst) throws IOException, BadChunk {
        PieceRead pieces = new PieceRead(ch, h.byteSize(), dst, READ_PIECE);
        // a segment of a confined arena is this thread's alone: then this thread reads every piece
        boolean shared = pieces.pieces() > 1 && HELPER.canWrite(dst);
        if (shared) {
            HELPER.offer(pieces); // it starts on piece 1 while this thread reads the header and piece 0
        }
        boolean firstDone = false;
        boolean finished = false;
        try {
            readFully(ch, h.asByteBuffer(), pieces.firstPiece().asByteBuffer());
            ChunkHeader header = expectedHeader(h, size, key, parent, tokens, dst.byteSize());
            pieces.pieceDone();
            firstDone = true;
            int actual = pieces.finish();
            finished = true;
            if (actual != header.payloadCrc()) {
                throw new BadChunk("payload checksum mismatch (header 0x" + Integer.toHexString(header.payloadCrc())
                        + ", bytes 0x" + Integer.toHexString(actual) + ")");
            }
            return new DiskRead.Ok(header);
        } finally {
            if (!finished) {
                pieces.cancel(firstDone); // returns once no other thread reads the file or writes dst
            }
            if (shared) {
                HELPER.remove(pieces);
            }
        }
    }

    /** The header in {@code h} if it is a valid header of the expected chunk of this namespace. */
    private ChunkHeader expectedHeader(MemorySegment h, long fileBytes, BlockKey key, BlockKey parent, int[] tokens,
                                       long payloadBytes) throws BadChunk {
        ChunkHeader header;
        try {
            header = ChunkHeader.readFrom(h, 0);
        } catch (IllegalArgumentException e) {
            throw new BadChunk(e.getMessage() + " (file of " + fileBytes + " bytes)");
        }
        String mismatch = mismatch(header, key, parent, tokens, payloadBytes);
        if (mismatch != null) {
            throw new BadChunk(mismatch);
        }
        return header;
    }

    /** A file that is not the expected, intact chunk; the message says why. */
    private static final class BadChunk extends Exception {
        BadChunk(String reason) {
            super(reason, null, false, false);
        }
    }

    /**
     * A per-thread scratch segment of at least {@code bytes} for headers. Deliberately not an
     * arena per call (a malloc and free per chunk): the buffer belongs to its thread and is freed
     * by the garbage collector when the thread ends; nothing else ever sees it.
     */
    private static MemorySegment scratch(long bytes) {
        ByteBuffer b = SCRATCH.get();
        if (b.capacity() < bytes) {
            b = ByteBuffer.allocateDirect((int) Math.max(bytes, 2L * b.capacity()));
            SCRATCH.set(b);
        }
        return MemorySegment.ofBuffer(b).asSlice(0, bytes);
    }

    /** Null if the header describes the expected chunk of this namespace, else what differs. */
    private String mismatch(ChunkHeader h, BlockKey key, BlockKey parent, int[] tokens, long payloadBytes) {
        if (!h.namespace().equals(layout.namespace())) {
            return "header of namespace " + h.namespace().shortHex() + ", this store's is " + layout.namespace().shortHex();
        }
        if (!h.key().equals(key)) {
            return "header of key " + h.key().shortHex() + ", expected " + key.shortHex();
        }
        if (!h.parent().equals(parent)) {
            return "parent key " + h.parent().shortHex() + " in the header, expected " + parent.shortHex();
        }
        if (!Arrays.equals(h.tokens(), tokens)) {
            return "token ids in the header differ from the expected ones (" + h.tokens().length + " vs "
                    + tokens.length + " ids)";
        }
        if (h.payloadLength() != payloadBytes) {
            return "payload length " + h.payloadLength() + " in the header, expected " + payloadBytes;
        }
        return null;
    }

    /** Reads the buffers full from the channel's position; an early end of file is an IOException. */
    private static void readFully(FileChannel ch, ByteBuffer... bufs) throws IOException {
        int first = 0;
        while (first < bufs.length) {
            if (ch.read(bufs, first, bufs.length - first) < 0) {
                throw new IOException("file ends at byte " + ch.position() + " before the expected end");
            }
            while (first < bufs.length && !bufs[first].hasRemaining()) {
                first++;
            }
        }
    }

    /** Reads {@code dst.byteSize()} bytes at {@code position}; an early end of file is an IOException. */
    static void readFully(FileChannel ch, MemorySegment dst, long position) throws IOException {
        ByteBuffer b = dst.asByteBuffer();
        while (b.hasRemaining()) {
            int n = ch.read(b, position + b.position());
            if (n < 0) {
                throw new IOException("file ends at byte " + (position + b.position()) + ", expected at least "
                        + (position + b.limit()));
            }
        }
    }

    /**
     * Deletes the chunk file of {@code key} if this store is the owner. I/O errors are logged, not
     * thrown (the file stays; a later restart scan adopts or deletes it).
     *
     * @return whether a file was deleted
     */
    public boolean delete(BlockKey key) {
        if (!writable() || !stillOwner()) {
            return false;
        }
        Path file = layout.requireInside(layout.fileOf(key));
        synchronized (stripe(key)) {
            try {
                return Files.deleteIfExists(file);
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "disk tier: cannot delete " + file + ": " + describe(e));
                return false;
            }
        }
    }

    /**
     * For the restart scan: deletes {@code file} (inside this namespace) if this store is the
     * owner and the file is still the one the scan judged (same file key, size and modification
     * time), so that a chunk written meanwhile under the same name survives. {@code key} is the
     * key the file is named after, or null for a temporary or unnamed file.
     *
     * @return whether it was deleted
     */
    boolean deleteIfUnchanged(Path file, BlockKey key, BasicFileAttributes judged) {
        if (!writable() || !stillOwner()) {
            return false;
        }
        Path p = layout.requireInside(file);
        if (key == null) {
            return deleteIfSame(p, judged); // a temporary file: no writer renames onto it
        }
        synchronized (stripe(key)) { // no write of this key can publish between the check and the delete
            return deleteIfSame(p, judged);
        }
    }

    private static boolean deleteIfSame(Path p, BasicFileAttributes judged) {
        try {
            BasicFileAttributes now = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!now.isRegularFile() || now.size() != judged.size()
                    || !now.lastModifiedTime().equals(judged.lastModifiedTime())
                    || !Objects.equals(now.fileKey(), judged.fileKey())) {
                return false;
            }
            Files.delete(p);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private Object stripe(BlockKey key) {
        return stripes[(int) (key.w3() & (stripes.length - 1))];
    }

    private void deleteQuietly(Path temp) {
        try {
            Files.deleteIfExists(temp);
        } catch (IOException e) {
            if (!Files.isDirectory(temp.getParent(), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                return; // its directory is gone or is a file (ENOTDIR): the temporary file was never made; the write's own line says why
            }
            LOG.log(System.Logger.Level.WARNING, "disk tier: cannot delete temporary file " + temp + ": " + describe(e));
        }
    }

    /**
     * Where the first write failure of each cause goes, as one line (stderr in the CLI): a full disk,
     * a read-only file system or a permission error would otherwise show only as a growing
     * {@code store_failures}. Null (the default) says nothing.
     */
    public void warnWriteFailures(java.util.function.Consumer<String> sink) {
        warn = sink;
    }

    /** Warns once per cause ({@link #causeOf}), not per chunk. */
    private void warnOnce(Exception e) {
        java.util.function.Consumer<String> sink = warn;
        String cause = causeOf(e);
        if (sink != null && warnedCauses.add(cause)) {
            sink.accept("disk tier " + layout.namespaceDir() + ": cannot write chunk files: " + cause
                    + " (chunks are not stored on disk while it lasts; counted in store_failures)");
        }
    }

    /**
     * A write failure's cause without the chunk's file name: the operating system's reason
     * ({@code Read-only file system}, {@code No space left on device}, {@code Permission denied}),
     * else the exception's kind.
     */
    static String causeOf(Exception e) {
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "Permission denied";
        }
        if (e instanceof java.nio.file.FileSystemException fs) {
            return fs.getReason() != null ? fs.getReason() : fs.getClass().getSimpleName();
        }
        return e.getMessage() != null && e instanceof IOException ? e.getMessage() : describe(e);
    }

    static String describe(Exception e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    /** Releases the directory lock (if held). Afterwards writes fail and deletes do nothing; reads still work. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        dirLock.release();
    }

    @Override
    public String toString() {
        return "DiskStore[" + layout.namespaceDir() + " " + role + " fsync=" + fsync.cliName() + "]";
    }
}
