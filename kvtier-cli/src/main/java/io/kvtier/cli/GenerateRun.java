package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Request;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Drives the engine for {@code generate}: submits the requests (all at once, or each after the
 * previous finished), hands each finished request to the {@link ResultPrinter} at once, and stops
 * early, cleanly, when a signal asks ({@link StopSignals}) or standard output is closed: the
 * requests still running are aborted (their blocks released), transfers in flight end, and the
 * caller closes the engine (which flushes and closes the tiers).
 */
final class GenerateRun {

    /** Why the run ended. */
    enum End { COMPLETED, SIGNALLED, OUTPUT_CLOSED }

    /**
     * @param finished          requests that finished normally, in completion order (printed)
     * @param unfinished        requests stopped before they finished, or never submitted (not printed)
     * @param firstTokenNanos   {@link System#nanoTime()} when the first token of the run was
     *                          generated, or 0 if none was
     */
    record Outcome(End end, List<Request> finished, int unfinished, long firstTokenNanos) {
    }

    private final Engine engine;
    private final ResultPrinter printer;
    private final StopSignals signals;
    private final boolean sequential;
    private final boolean clearDeviceCacheBetween;
    private final StepTimes stepTimes = StepTimes.ifDebug();

    GenerateRun(Engine engine, ResultPrinter printer, StopSignals signals, boolean sequential, boolean clearDeviceCacheBetween) {
        this.engine = engine;
        this.printer = printer;
        this.signals = signals;
        this.sequential = sequential;
        this.clearDeviceCacheBetween = clearDeviceCacheBetween;
    }

    /** Runs {@code requests} (checked with {@link Engine#checkFits} beforehand) to the end or to a stop. */
    Outcome run(List<Request> requests) {
        Set<Request> active = new LinkedHashSet<>();
        List<Request> finished = new ArrayList<>();
        long firstToken = 0;
        int next = 0;
        End end = End.COMPLETED;
        while (true) {
            if (signals.requested()) {
                end = End.SIGNALLED;
                break;
            }
            if (!engine.hasWork() && next < requests.size()) {
                if (sequential && next > 0) {
                    engine.drainTransfers(); // the previous prompt's stores are readable before the next looks
                    if (clearDeviceCacheBetween) {
                        engine.resetDevicePrefixCache();
                    }
                }
                do {
                    Request r = requests.get(next++);
                    engine.submit(r);
                    active.add(r);
                    printer.submitted(r);
                } while (!sequential && next < requests.size());
            }
            if (!engine.hasWork()) {
                break;
            }
            if (stepTimes != null) {
                stepTimes.begin();
            }
            List<Request> done = engine.advance();
            if (firstToken == 0 && engine.stats().generatedTokens() > 0) {
                firstToken = System.nanoTime();
            }
            printer.stepped();
            for (Request r : done) {
                active.remove(r);
                finished.add(r);
                printer.finished(r);
            }
            if (stepTimes != null) {
                stepTimes.end();
            }
            if (printer.outputClosed()) {
                end = End.OUTPUT_CLOSED;
                break;
            }
        }
        stop(active);
        if (end == End.SIGNALLED) {
            printer.stopped();
        }
        engine.drainTransfers();
        return new Outcome(end, finished, requests.size() - finished.size(), firstToken);
    }

    /** With {@code -Dkvtier.warmup.debug=true}: each step's wall and CPU time to {@code err} (after the run). */
    void printStepTimes(java.io.PrintStream err) {
        if (stepTimes != null) {
            stepTimes.print(err);
        }
    }

    /** Aborts what still runs (each finishes with reason abort at the next step). */
    private void stop(Set<Request> active) {
        for (Request r : active) {
            engine.abort(r.id());
        }
        while (engine.hasWork()) {
            engine.advance();
        }
    }
}
