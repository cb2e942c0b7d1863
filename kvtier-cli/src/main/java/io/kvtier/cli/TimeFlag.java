package io.kvtier.cli;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * The converter of every flag that takes a time ({@code --remote-timeout}, {@code --remote-ttl},
 * {@code --remote-breaker-open}, {@code --shutdown-grace}, {@code --disk-scan-wait}, bench offload's
 * {@code --seconds-per-size}, replay's {@code --weight-read-ms}, {@code --step-overhead-ms},
 * {@code --host-latency-us}, {@code --remote-latency-us}): a number with a unit, {@code us},
 * {@code ms} or {@code s} ({@code 500ms}, {@code 1.5s}, {@code 10us}), or a plain number in the
 * flag's own unit, the one it took before units were spelled: the flags took seconds, milliseconds
 * or microseconds, by flag, and a script's {@code --remote-timeout 500} still means 500 ms. The
 * value is exact (decimal, not floating point) and a whole number of the flag's tick: milliseconds
 * for the flags whose consumers keep milliseconds ({@code 0.0005s} is refused, not cut to 0),
 * nanoseconds for replay's cost model, whose virtual clock counts them. A sign is kept, for the
 * flag's own range check to refuse in its words. Its refusal says what is wrong;
 * {@link Main#describe} puts the flag's name before it.
 */
abstract sealed class TimeFlag implements CommandLine.ITypeConverter<Duration>
        permits TimeFlag.Millis, TimeFlag.Seconds, TimeFlag.CostMillis, TimeFlag.CostMicros {

    /** Digits, an optional fraction, an optional unit spelled exactly ({@code 1e3}, {@code 1S}, {@code 1 s} are refused). */
    private static final Pattern TIME = Pattern.compile("(-?\\d+(?:\\.\\d+)?)(us|ms|s)?");

    /** The units of the grammar, and the ticks a flag keeps. */
    enum Unit {
        NANOS(1, "ns", "nanoseconds", ChronoUnit.NANOS),
        MICROS(1_000, "us", "microseconds", ChronoUnit.MICROS),
        MILLIS(1_000_000, "ms", "milliseconds", ChronoUnit.MILLIS),
        SECONDS(1_000_000_000, "s", "seconds", ChronoUnit.SECONDS);

        final long nanos;
        final String symbol;
        final String plural;
        final ChronoUnit chrono;

        Unit(long nanos, String symbol, String plural, ChronoUnit chrono) {
            this.nanos = nanos;
            this.symbol = symbol;
            this.plural = plural;
            this.chrono = chrono;
        }

        static Unit of(String symbol) {
            for (Unit u : values()) {
                if (u.symbol.equals(symbol)) {
                    return u;
                }
            }
            throw new IllegalArgumentException(symbol);
        }
    }

    private final Unit plain;
    private final Unit tick;
    private final String examples;

    private TimeFlag(Unit plain, Unit tick, String examples) {
        this.plain = plain;
        this.tick = tick;
        this.examples = examples;
    }

    /** A flag whose plain number is milliseconds, kept in whole milliseconds. */
    static final class Millis extends TimeFlag {
        Millis() {
            super(Unit.MILLIS, Unit.MILLIS, "500ms, 2s, 1.5s");
        }
    }

    /** A flag whose plain number is seconds, kept in whole milliseconds. */
    static final class Seconds extends TimeFlag {
        Seconds() {
            super(Unit.SECONDS, Unit.MILLIS, "500ms, 2s, 1.5s");
        }
    }

    /** A replay cost-model time whose plain number is milliseconds, kept in whole nanoseconds. */
    static final class CostMillis extends TimeFlag {
        CostMillis() {
            super(Unit.MILLIS, Unit.NANOS, "6ms, 500us, 0.5ms");
        }
    }

    /** A replay cost-model time whose plain number is microseconds, kept in whole nanoseconds. */
    static final class CostMicros extends TimeFlag {
        CostMicros() {
            super(Unit.MICROS, Unit.NANOS, "10us, 0.5us, 1ms");
        }
    }

    @Override
    public Duration convert(String text) {
        Matcher m = TIME.matcher(text);
        if (!m.matches()) {
            throw new CommandLine.TypeConversionException("'" + text + "' is not a time (e.g. " + examples + "; a plain number is "
                    + plain.plural + ")");
        }
        Unit unit = m.group(2) == null ? plain : Unit.of(m.group(2));
        BigDecimal ticks = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unit.nanos)).divide(BigDecimal.valueOf(tick.nanos));
        if (ticks.signum() != 0 && ticks.stripTrailingZeros().scale() > 0) {
            throw new CommandLine.TypeConversionException("'" + text + "' is " + ticks.stripTrailingZeros().toPlainString()
                    + " " + tick.symbol + ", not a whole number of " + tick.plural);
        }
        try {
            return Duration.of(ticks.longValueExact(), tick.chrono);
        } catch (ArithmeticException e) {
            throw new CommandLine.TypeConversionException("'" + text + "' is too long a time");
        }
    }

    /** The time in seconds, for a range check that says its range in seconds ({@link Checks#shown(double)} echoes it). */
    static double seconds(Duration d) {
        return d.toMillis() / 1000.0;
    }

    /** The time in {@code unit}, exact, for a message that echoes a flag in its plain unit ({@code 5.99} for 5.99 ms). */
    static String shown(Duration d, Unit unit) {
        BigDecimal nanos = BigDecimal.valueOf(d.getSeconds()).multiply(BigDecimal.valueOf(1_000_000_000L)).add(BigDecimal.valueOf(d.getNano()));
        return nanos.divide(BigDecimal.valueOf(unit.nanos)).stripTrailingZeros().toPlainString();
    }
}
