package io.kvtier.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What {@code bench generate} says when its fractions of the bandwidth bound cannot be taken at
 * their word: the flag on a decode line whose fraction is not believable, and one note under the
 * figures saying what is wrong and the likely cause, from what the run knows of itself.
 *
 * <p>A step cannot read its bytes faster than the read pass next to it streams them, so a
 * fraction above 1 says the pass was slow, not the step fast. Seen: a read pass left to C1 by a
 * warm-up that ran decode without passes (a new user's {@code --max-tokens 2}: 0.10 GB/s, "109.60
 * of the bound"); {@code --threads 3} on 2 processors, where a pass's helper threads, parked between
 * passes while a step's spin, wait to be scheduled; weights so small that a pass is mostly its own
 * start; and a busy machine, which also spreads the quartiles.
 */
final class BoundNote {

    /** Above this a fraction is not a measurement: 1 plus what a step and the pass before it differ by on an idle machine. */
    static final double BELIEVABLE = 1.2;
    /** Quartiles further apart than this ratio (upper / lower) say steps or passes were slowed at random. */
    static final double WIDE = 1.5;
    /** Passes during the runs slower than this share of the same pass after them were slowed. */
    static final double SLOWED = 0.5;
    /** Weights (bytes) below which a read pass is mostly its own start, not reading (a 0.2 MB model: 300 us a pass). */
    static final long SMALL_WEIGHTS = 4L << 20;

    private BoundNote() {
    }

    /** A decode figure's fractions of the bound: its name on the note, its quartiles and median. */
    record Figure(String name, double lower, double median, double upper) {

        boolean believable() {
            return median <= BELIEVABLE;
        }

        boolean wide() {
            return upper > WIDE * lower;
        }
    }

    /**
     * What the run knows of its conditions.
     *
     * @param threads          the compute and read threads ({@code --threads})
     * @param processors       processors available to the JVM
     * @param bufferBytes      bytes a read pass reads (the weights')
     * @param bestPassNanos    the fastest read pass during the decode runs
     * @param afterBytesPerSec the same pass's bandwidth after the runs (the scaling rounds', at {@code threads}); 0 if not measured
     * @param loadAverage      the system's load average over the last minute, negative if unknown
     */
    record Run(int threads, int processors, long bufferBytes, long bestPassNanos, double afterBytesPerSec,
               double loadAverage) {

        double passBytesPerSec() {
            return bufferBytes / (bestPassNanos / 1e9);
        }

        boolean oversubscribed() {
            return threads > processors;
        }

        boolean passesSlowed() {
            return afterBytesPerSec > 0 && passBytesPerSec() < SLOWED * afterBytesPerSec;
        }
    }

    /** The flag a decode line ends its parenthesis with: empty for a believable fraction. */
    static String flag(Figure f) {
        return f.believable() ? "" : String.format(Locale.ROOT, "; above %.1f: not a measurement, see the note", BELIEVABLE);
    }

    /** The flag the read-bandwidth line ends with: empty unless its passes were far slower than the same pass after the runs. */
    static String flag(Run r) {
        return r.passesSlowed() ? String.format(Locale.ROOT, "; after the runs the same pass read %.2f GB/s: these"
                + " were slowed, see the note", r.afterBytesPerSec() / 1e9) : "";
    }

    /**
     * The note under the figures, or null when every fraction is believable, its quartiles are
     * close and the passes ran at the speed they reach after the runs.
     */
    static String note(Run r, List<Figure> figures) {
        List<Figure> unbelievable = figures.stream().filter(f -> !f.believable() || f.upper() > BELIEVABLE).toList();
        List<Figure> wide = figures.stream().filter(Figure::wide).toList();
        if (unbelievable.isEmpty() && wide.isEmpty() && !r.passesSlowed()) {
            return null;
        }
        String what;
        if (!unbelievable.isEmpty()) {
            what = String.format(Locale.ROOT, "fractions above %.1f (%s) are not measurements: a step cannot read its"
                    + " bytes faster than the read pass before it streams them, so the passes were slowed",
                    BELIEVABLE, names(unbelievable));
        } else if (!wide.isEmpty()) {
            Figure w = wide.getFirst();
            what = String.format(Locale.ROOT, "quartiles as far apart as %.2f-%.2f (%s) mean steps or passes were"
                    + " slowed at random; the median is a rough figure", w.lower(), w.upper(), names(wide));
        } else {
            what = "the read passes were slowed, so the fractions are too high";
        }
        List<String> causes = new ArrayList<>();
        if (r.passesSlowed()) {
            causes.add(String.format(Locale.ROOT, "the passes during the runs read %.2f GB/s at best, the same pass"
                    + " after them %.2f", r.passBytesPerSec() / 1e9, r.afterBytesPerSec() / 1e9));
        }
        if (r.oversubscribed()) {
            causes.add(String.format(Locale.ROOT, "--threads %d on %s: the threads take turns, and a"
                    + " pass's helpers (asleep between passes, where a step's spin) wait longest for a processor;"
                    + " measure with --threads %d or fewer", r.threads(), io.kvtier.text.Plural.count(r.processors(), "processor"),
                    r.processors()));
        }
        if (r.bufferBytes() < SMALL_WEIGHTS) {
            causes.add(String.format(Locale.ROOT, "a read pass of these %,.1f MB of weights took %.0f us, mostly its"
                    + " start and the hand-off to the pool's threads, so for weights this small the bound says little",
                    r.bufferBytes() / 1e6, r.bestPassNanos() / 1e3));
        }
        if (causes.isEmpty() || (!r.oversubscribed() && r.loadAverage() > r.processors())) {
            causes.add(r.loadAverage() >= 0
                    ? String.format(Locale.ROOT, "other work on the machine (load average %.1f on %s);"
                            + " measure on an idle machine", r.loadAverage(), io.kvtier.text.Plural.count(r.processors(), "processor"))
                    : "other work on the machine; measure on an idle machine");
        }
        return "note: " + what + ". Likely: " + String.join("; ", causes);
    }

    private static String names(List<Figure> figures) {
        return String.join(", ", figures.stream().map(Figure::name).toList());
    }
}
