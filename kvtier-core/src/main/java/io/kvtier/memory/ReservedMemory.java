package io.kvtier.memory;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Off-heap memory reserved without being touched: an anonymous private mapping
 * ({@code mmap(MAP_PRIVATE | MAP_ANONYMOUS)}), whose pages the kernel supplies, zeroed, on first
 * touch. {@link Arena#allocate} instead zeroes every byte up front: a 20 GiB host tier then
 * cost about 5 s per GiB and all of its memory resident before the first token, however little
 * of it a run used. The reservation still counts against the kernel's overcommit check (no
 * {@code MAP_NORESERVE}), so a tier far beyond the machine's memory fails here, at start, not
 * with the OOM killer mid-run.
 *
 * <p>Linux and other POSIX systems with the usual {@code MAP_ANONYMOUS} value; elsewhere (or if
 * the mapping call cannot be linked) it falls back to {@link Arena#allocate}.
 */
public final class ReservedMemory {

    private static final int PROT_READ = 0x1;
    private static final int PROT_WRITE = 0x2;
    private static final int MAP_PRIVATE = 0x02;
    private static final int MAP_ANONYMOUS = 0x20; // Linux (x86, arm, riscv)
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;
    private static final MethodHandle MINCORE;
    private static final MethodHandle MADVISE;
    private static final int MADV_HUGEPAGE = 14; // Linux, every architecture
    /** The size of a transparent huge page on x86-64 and most arm64 kernels: 2 MiB. */
    static final long HUGE_PAGE = 2L << 20;
    private static final long PAGE;

    static {
        MethodHandle mmap = null;
        MethodHandle munmap = null;
        MethodHandle mincore = null;
        MethodHandle madvise = null;
        long page = 4096;
        if (System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            try {
                Linker linker = Linker.nativeLinker();
                var libc = linker.defaultLookup();
                mmap = linker.downcallHandle(libc.find("mmap").orElseThrow(), FunctionDescriptor.of(ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
                munmap = linker.downcallHandle(libc.find("munmap").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                        ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
                mincore = linker.downcallHandle(libc.find("mincore").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                        ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
                madvise = linker.downcallHandle(libc.find("madvise").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                        ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
                MethodHandle pageSize = linker.downcallHandle(libc.find("getpagesize").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT));
                page = (int) pageSize.invokeExact();
            } catch (Throwable e) {
                mmap = null; // no native access: zeroed allocation instead
                munmap = null;
                mincore = null;
                madvise = null;
            }
        }
        MMAP = mmap;
        MUNMAP = munmap;
        MADVISE = madvise;
        MINCORE = mincore;
        PAGE = page;
    }

    private ReservedMemory() {
    }

    /** Whether {@link #reserve} maps lazily here (false: it allocates and zeroes up front). */
    public static boolean lazy() {
        return MMAP != null;
    }

    /**
     * {@code bytes} of zeroed memory, page-aligned, freed when {@code arena} closes. Pages become
     * resident only when first touched.
     *
     * @throws OutOfMemoryError if the system refuses the reservation
     */
    public static MemorySegment reserve(Arena arena, long bytes) {
        if (MMAP == null) {
            return arena.allocate(bytes, 4096);
        }
        MemorySegment addr = map(bytes);
        return addr.reinterpret(bytes, arena, ReservedMemory::unmap);
    }

    /**
     * As {@link #reserve}, for memory read as a few long streams at every step (the model's
     * weights, the bandwidth bound's buffer): its start aligned to {@link #HUGE_PAGE} and the
     * kernel asked to back it with transparent huge pages ({@code madvise(MADV_HUGEPAGE)}; this
     * machine's kernel, like most distributions', gives them only on request). With 4 KiB pages a
     * pass over 60 MB of weights crosses 15,000 pages, each a TLB miss; with 2 MiB pages, 30. On
     * the stories15M shape the single-sequence product streamed 6% faster and the bound's read
     * pass 6%; on the 110M shape neither changed (docs/bandwidth-bound.md, "Huge pages"). Where
     * the kernel has no huge pages to give (THP off, memory fragmented) the request is advice
     * only and the memory is the same 4 KiB pages.
     *
     * @throws OutOfMemoryError if the system refuses the reservation
     */
    public static MemorySegment reserveHugePages(Arena arena, long bytes) {
        if (MMAP == null || MADVISE == null) {
            return arena.allocate(bytes, 4096);
        }
        long mapped = bytes + HUGE_PAGE;
        MemorySegment whole = map(mapped);
        long start = (whole.address() + HUGE_PAGE - 1) & -HUGE_PAGE;
        long advised = (bytes + HUGE_PAGE - 1) & -HUGE_PAGE;
        MemorySegment aligned = MemorySegment.ofAddress(start).reinterpret(Math.min(advised, whole.address() + mapped - start));
        try {
            int ignored = (int) MADVISE.invokeExact(aligned, aligned.byteSize(), MADV_HUGEPAGE); // advice: failure leaves 4 KiB pages
        } catch (Throwable t) {
            // as a refusal: the pages stay small
        }
        return MemorySegment.ofAddress(start).reinterpret(bytes, arena, s -> unmap(whole.reinterpret(mapped)));
    }

    private static MemorySegment map(long bytes) {
        MemorySegment addr;
        try {
            addr = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException("mmap of " + bytes + " bytes failed", t);
        }
        if (addr.address() == -1L) { // MAP_FAILED
            throw new OutOfMemoryError("cannot reserve " + bytes + " bytes of host memory (mmap refused: the machine's memory"
                    + " and overcommit limit are smaller)");
        }
        return addr;
    }

    /**
     * Makes the pages of {@code s[0..bytes)} resident now, by writing a zero to each: the page
     * faults of their first touch are taken here instead of in whatever writes them first. On
     * this project's 2-vCPU VM a first touch cost about 7-10 us a 4 KiB page (a stories260K KV
     * block, 10 pages, took a decode step from ~60 to ~130-200 us; docs/design-notes.md, "Warm
     * start"). Only for memory nothing has written yet: the zeros overwrite what is there.
     *
     * @param s     a segment from {@link #reserve} (page-aligned)
     * @param bytes bytes from its start to make resident, at most {@code s.byteSize()}
     */
    public static void prefault(MemorySegment s, long bytes) {
        if (bytes < 0 || bytes > s.byteSize()) {
            throw new IllegalArgumentException("prefault of " + bytes + " bytes of a " + s.byteSize() + "-byte segment");
        }
        for (long o = 0; o < bytes; o += PAGE) {
            s.set(ValueLayout.JAVA_BYTE, o, (byte) 0);
        }
    }

    /**
     * Bytes of {@code s}, a segment from {@link #reserve}, that are resident now (pages touched
     * at least once), counted in pages through {@code mincore}. Without lazy reservation
     * every byte was zeroed up front, so the whole size is returned.
     *
     * @param s a segment returned by {@link #reserve} (page-aligned)
     * @return resident bytes, at most {@code s.byteSize()}: a last page only partly inside {@code s}
     *         counts for the part inside (a slab of 49,920 B was shown as 57,344 B written)
     */
    public static long residentBytes(MemorySegment s) {
        if (MINCORE == null || s.byteSize() == 0) {
            return s.byteSize();
        }
        long pages = (s.byteSize() + PAGE - 1) / PAGE;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment vec = a.allocate(pages);
            int rc = (int) MINCORE.invokeExact(s, s.byteSize(), vec);
            if (rc != 0) {
                return s.byteSize();
            }
            long resident = 0;
            for (long i = 0; i < pages; i++) {
                resident += vec.get(ValueLayout.JAVA_BYTE, i) & 1;
            }
            return Math.min(resident * PAGE, s.byteSize());
        } catch (Throwable t) {
            throw new IllegalStateException("mincore failed", t);
        }
    }

    private static void unmap(MemorySegment s) {
        try {
            int rc = (int) MUNMAP.invokeExact(s, s.byteSize());
            assert rc == 0 : "munmap failed";
        } catch (Throwable t) {
            throw new IllegalStateException("munmap failed", t);
        }
    }
}
