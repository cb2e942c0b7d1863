/**
 * The disk tier's data path and persistence: one self-describing, verified file per chunk, under
 * a directory that survives restarts and may be shared by several engine processes.
 *
 * <h2>Files</h2>
 * {@code <root>/<namespace hex>/<first 2 hex digits of the key>/<key hex>.kvc} ({@link
 * io.kvtier.tier.disk.DiskLayout}); the bytes are the {@link io.kvtier.tier.ChunkHeader} (magic
 * "KVTC", format version, namespace, key, parent, token ids, payload length, payload CRC32C, header
 * CRC32C) followed by the payload, nothing else ({@link io.kvtier.tier.disk.DiskStore}). Different
 * namespaces (model, dtype, shapes, block size, blocks per chunk, format) live in different
 * directories and never read each other's files; a file found in the wrong directory fails
 * verification anyway.
 *
 * <h2>Publishing</h2>
 * A chunk is written to {@code .<key hex>.kvc.tmp-<pid>x<random>-<n>} in the key's directory, forced to
 * disk per {@link io.kvtier.tier.disk.DiskFsync}, and renamed over its name with an atomic
 * rename. A reader therefore sees no file or a complete one; a writer that dies leaves only a
 * temporary file, which the next {@link io.kvtier.tier.disk.DiskIndexScan} of the owner deletes.
 * Every read checks header, size and payload CRC32C, so even a file damaged after publication
 * (or torn by a power loss with {@code --disk-fsync none}) is rejected, never used.
 *
 * <h2>Two processes on one directory: one owner, any number of readers</h2>
 * The choice: an advisory OS lock ({@link java.nio.channels.FileChannel#tryLock()}) on
 * {@code <root>/<namespace hex>/.lock}, held for the life of a {@link
 * io.kvtier.tier.disk.DiskStore} ({@code DirectoryLock}); the file's existence means nothing, and
 * the owner checks before every write and delete that the name still leads to the file it locked,
 * so deleting or replacing {@code .lock} never makes two owners. A store that cannot own says why
 * in one line ({@link io.kvtier.tier.disk.DiskStore#readOnlyReason()}). The store holding it is the OWNER: the only one that writes,
 * evicts (deletes) and cleans up after restarts, so its capacity accounting is the truth for the
 * directory. Any other store on the same namespace directory (another process, or a second store
 * in this JVM, which is recognized without touching the lock, because POSIX locks belong to the
 * whole process) is a READER: its writes return {@link io.kvtier.tier.disk.DiskWrite.Failed} at
 * once without touching the disk, its deletes do nothing, its restart scan deletes nothing, but
 * it reads (and so starts warm from) every chunk the owner published, and it scans the directory
 * again a few seconds after each scan ends ({@link io.kvtier.tier.disk.ReaderRescan}) to find the
 * chunks the owner published since. For a reader a file may
 * vanish at any time (the owner evicted it): that read is {@link
 * io.kvtier.tier.disk.DiskRead.Missing}, a load failure that falls back to recomputing, never a
 * wrong result. An open file that is replaced or deleted meanwhile stays readable in full (POSIX
 * unlink semantics), so a read is of exactly one version of the file. A reader may call
 * {@link io.kvtier.tier.disk.DiskStore#tryBecomeOwner()} later (e.g. when the owner exits).
 * Different namespaces have different locks: engines of different models share a root freely.
 *
 * <p>Why not per-process ownership of files: after a restart nobody owns the old files, and two
 * processes evicting against their own budgets would use twice the configured bytes. Why not a
 * lock per file: every read would pay for it, and readers would block writers.
 *
 * <h2>Nothing outside the root</h2>
 * Every path written or deleted is built from hex digits under the namespace directory and
 * checked by {@link io.kvtier.tier.disk.DiskLayout#requireInside}; namespace and shard
 * directories that are symbolic links are refused; the scan deletes only regular files (never
 * following links) in its own namespace's shard directories, with names it recognizes.
 *
 * <h2>Threads</h2>
 * {@link io.kvtier.tier.disk.DiskStore} is thread-safe and meant for the transfer threads; the
 * tier's bookkeeping ({@link io.kvtier.tier.TierIndex}) stays on the engine thread, which also
 * drains {@link io.kvtier.tier.disk.DiskIndexScan} each step. A read of more than one piece is
 * shared with the JVM's {@code ReadHelper} thread ({@code PieceRead}): each piece is read and
 * checksummed by one thread, the CRCs combined ({@link io.kvtier.tier.disk.Crc32cCombine}); the
 * read returns only when no other thread touches its file or destination.
 */
package io.kvtier.tier.disk;
