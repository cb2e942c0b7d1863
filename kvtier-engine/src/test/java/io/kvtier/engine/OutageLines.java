package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

/**
 * The remote tier's outage lines in a test's warnings: "remote tier: X stopped answering (...)",
 * said once when a node's breaker opens, and "remote tier: X answers again" when every breaker has
 * closed after it (LettuceRemoteStore). Tests with injected store faults expect them and nothing else.
 */
final class OutageLines {

    private OutageLines() {
    }

    static boolean isDown(String line) {
        return line.startsWith("remote tier: ") && line.contains(" stopped answering (")
                && line.endsWith(" ms)") && line.contains("; lookups miss and writes are dropped until it answers");
    }

    static boolean isUp(String line) {
        return line.startsWith("remote tier: ") && line.endsWith(" answers again");
    }

    /**
     * Asserts that {@code warnings} hold only outage lines, a down line never right after another
     * (said once per outage) and an up line only after a down line; returns the down lines' count.
     */
    static int assertOnlyOutages(List<String> warnings) {
        int down = 0;
        boolean isDown = false;
        for (String w : warnings) {
            assertThat(isDown(w) || isUp(w)).as("only outage lines: %s", warnings).isTrue();
            assertThat(isDown(w)).as("down and up alternate, starting down: %s", warnings).isEqualTo(!isDown);
            isDown = isDown(w);
            down += isDown ? 1 : 0;
        }
        return down;
    }
}
