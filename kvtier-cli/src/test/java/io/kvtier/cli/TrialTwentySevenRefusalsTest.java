package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A new user's trial 27, the offloading side: flag values that were an internal error (a stack
 * trace, exit 1) or that silently meant something else are one line and exit 2, nothing printed
 * above it. Nothing listens at port 1, and every refusal comes before the store is reached.
 */
class TrialTwentySevenRefusalsTest {

    private static void assertOneLineError(CliRun r, String expected) {
        GgufCliErrorsTest.assertOneLineError(r, expected);
    }

    private static CliRun generateWithRemote(String... flags) {
        String[] args = new String[6 + flags.length];
        System.arraycopy(new String[] {"generate", "--prompt", "hi", "--max-tokens", "1", "--remote-url=redis://127.0.0.1:1"}, 0,
                args, 0, 6);
        System.arraycopy(flags, 0, args, 6, flags.length);
        return CliRun.of(args);
    }

    /** Lettuce's connect timeout is an int of ms: 2147483648 was an ArithmeticException from inside the client. */
    @Test
    void aRemoteTimeoutBeyondADayIsRefused() {
        assertOneLineError(generateWithRemote("--remote-timeout", "2147483648"),
                "--remote-timeout must be at most 86400000 (a day in ms), got 2147483648");
        assertOneLineError(generateWithRemote("--remote-timeout", "99999999999"),
                "--remote-timeout must be at most 86400000 (a day in ms), got 99999999999");
    }

    /** The breaker's period is kept in ns: Long.MAX_VALUE ms overflowed Duration.toNanos at the store's start. */
    @Test
    void aBreakerPeriodBeyondADayIsRefused() {
        assertOneLineError(generateWithRemote("--remote-breaker-open", "9223372036854775807"),
                "--remote-breaker-open must be at most 86400000 (a day in ms), got 9223372036854775807");
    }

    /** The expiry is sent in whole ms: 0.0001 s became 0 ms, which the store takes as no expiry at all. */
    @Test
    void aRemoteTtlBelowOneMillisecondIsRefusedNotTurnedIntoNoExpiry() {
        assertOneLineError(generateWithRemote("--remote-ttl", "0.0001"), "--remote-ttl must be 0 (no expiry) or at least "
                + "0.001 seconds (the store's expiry is in whole milliseconds), got 0.0001");
    }
}
