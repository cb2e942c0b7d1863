package io.kvtier.engine;

import io.kvtier.kv.ExtraKeys;
import java.util.List;

/**
 * The submit/step/run loop of the fixtures that check ACCEPTANCE's invariants after every engine
 * step ({@link OffloadFixture}, {@link WindowOffloadFixture}): a subclass builds the engine and says
 * what it remembers of a request and what it checks.
 */
abstract class CheckedEngineFixture implements AutoCloseable {
    private long nextId;

    /** The engine under test (built by the subclass's constructor). */
    abstract Engine engine();

    /** A request was just submitted: note what the checks need of it. */
    abstract void submitted(Request r);

    /** A step just ran and finished {@code done}: note what it changed in the requests. */
    abstract void stepped(List<Request> done);

    /** ACCEPTANCE's per-step invariants; fails with an AssertJ error. */
    abstract void checkInvariants();

    /** Submits a greedy request with ids 0, 1, 2... in submission order. */
    Request submitWithKeys(int[] prompt, int maxTokens, ExtraKeys extraKeys) {
        Request r = new Request(nextId++, prompt, maxTokens, SamplingParams.GREEDY, extraKeys);
        engine().submit(r);
        submitted(r);
        return r;
    }

    Request submit(int[] prompt, int maxTokens) {
        return submitWithKeys(prompt, maxTokens, ExtraKeys.NONE);
    }

    /** One engine step, then every invariant. */
    List<Request> step() {
        List<Request> done = engine().step();
        stepped(done);
        checkInvariants();
        return done;
    }

    /** Steps until no request is left, then drains the transfers; checks invariants throughout. */
    List<Request> run() {
        List<Request> done = FingerprintEngines.runChecked(engine(), this::step);
        checkInvariants();
        return done;
    }

    /** Runs one request to the end and returns it. */
    Request runOne(int[] prompt, int maxTokens) {
        Request r = submit(prompt, maxTokens);
        run();
        return r;
    }

    @Override
    public void close() {
        engine().close(); // closes the transfers, then the host tiers, then the device pools
    }
}
