package io.kvtier.replay;

import java.io.Console;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * Progress of a long replay, in requests. On a terminal it is a progress bar on stderr
 * (me.tongfei:progressbar); elsewhere (a pipe, a file, a test) it does nothing. Thread-safe.
 */
public interface Progress extends AutoCloseable {

    /** {@code n} more requests done. */
    void step(long n);

    @Override
    void close();

    /** A progress that shows nothing. */
    static Progress none() {
        return new Progress() {
            @Override
            public void step(long n) {
            }

            @Override
            public void close() {
            }
        };
    }

    /**
     * A progress bar of {@code total} requests named {@code task} when the JVM has a console that
     * is a terminal ({@link System#console()} is not null and, since JDK 22 returns a console for
     * redirected streams too, {@link Console#isTerminal()}); otherwise {@link #none()}.
     */
    static Progress onTerminal(String task, long total) {
        Console console = System.console();
        if (console == null || !console.isTerminal()) {
            return none();
        }
        ProgressBar bar = new ProgressBarBuilder().setTaskName(task).setInitialMax(total).setUnit(" req", 1)
                .setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(250).showSpeed().build();
        return new Progress() {
            @Override
            public void step(long n) {
                bar.stepBy(n);
            }

            @Override
            public void close() {
                bar.close();
            }
        };
    }
}
