package io.kvtier.cli;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * For a test class whose benches run in this JVM: one warm-up run per figure
 * ({@code kvtier.bench.warmupMaxMillis=0}), so a table takes seconds, not 2 s or more a figure;
 * the property is cleared after the class. Use with {@code @ExtendWith(OneWarmUpRound.class)}.
 */
final class OneWarmUpRound implements BeforeAllCallback, AfterAllCallback {

    @Override
    public void beforeAll(ExtensionContext context) {
        System.setProperty("kvtier.bench.warmupMaxMillis", "0");
    }

    @Override
    public void afterAll(ExtensionContext context) {
        System.clearProperty("kvtier.bench.warmupMaxMillis");
    }
}
