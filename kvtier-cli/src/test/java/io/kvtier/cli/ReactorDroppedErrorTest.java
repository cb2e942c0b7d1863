package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;
import reactor.core.Exceptions;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * A new user's trial: after a wrong password had turned the remote tier off, Reactor (under the
 * Lettuce client) printed "Operator called default onErrorDropped ... Scheduler unavailable" once,
 * as an ERROR with its stack. An error dropped because the client's threads have ended is the
 * store closing: not printed with the CLI's logging (slf4j-simple, warnings and errors on
 * stderr); any other dropped error still is.
 */
class ReactorDroppedErrorTest {

    @Test
    void aRejectionOfTheEndedClientThreadsIsNotPrintedAnyOtherDroppedErrorIs() throws Exception {
        Class.forName("io.kvtier.tier.remote.LettuceRemoteStore"); // as in any process with a remote tier
        // The shape of the trial's line: a subscriber without an error callback, its scheduler's executor shut down.
        assertThat(stderrOf(() -> Operators.onErrorDropped(
                Exceptions.errorCallbackNotImplemented(new RejectedExecutionException("Scheduler unavailable")), Context.empty())))
                .isEmpty();
        assertThat(stderrOf(() -> Operators.onErrorDropped(new IllegalStateException("a bug"), Context.empty())))
                .contains("ERROR").contains("onErrorDropped").contains("java.lang.IllegalStateException: a bug");
    }

    private static String stderrOf(Runnable r) {
        PrintStream err = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setErr(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            r.run();
        } finally {
            System.setErr(err);
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
