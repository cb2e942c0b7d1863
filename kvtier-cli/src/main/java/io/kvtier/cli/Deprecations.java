package io.kvtier.cli;

import java.io.PrintStream;

/** The note on stderr for {@code 0} given where it used to mean "the default" (kept for one release). */
final class Deprecations {

    private Deprecations() {
    }

    /**
     * {@code value}, or null (the default) if it is the former "0 = default" spelling, with a note.
     * Zero now always means zero; a default is had by leaving the flag out.
     */
    static Integer zeroMeansDefault(Integer value, String flag) {
        if (value != null && value == 0) {
            err().println("kvtier: " + flag + " 0 for the default is deprecated and will be refused in the next release; "
                    + "leave " + flag + " out");
            return null;
        }
        return value;
    }

    private static PrintStream err() {
        return System.err;
    }
}
