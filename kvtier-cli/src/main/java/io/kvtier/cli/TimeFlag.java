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
 * flag's range check ({@link #inRange}, one form for every flag) to refuse, and so is a time past a long's
 * ticks (as the most, or least, of them). Its refusal says what is wrong;
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
            // Past the ticks a long holds: the most (least) of them, for the flag's range check to refuse
            // in its one form with the text as given ("is too long a time" named no range).
            return Duration.of(ticks.signum() > 0 ? Long.MAX_VALUE : Long.MIN_VALUE, tick.chrono);
        }
    }

    /**
     * {@code value}, refused outside {@code min..max} in the one line every time flag's range check
     * says: {@code --shutdown-grace must be between 0s and 86400s (1 day), got -500ms}. The bounds are
     * spelled in the grammar ({@link #spelled}); the value as given on the command line, a plain
     * number with the flag's unit ({@code --remote-timeout 0} reads {@code got 0ms}).
     *
     * @param spec the command as parsed (a mixin's {@code @Spec(MIXEE)}), for the text given; null
     *             (outside picocli) spells the value
     * @param zero what 0 means where it is allowed below {@code min} ({@code --remote-ttl}'s "no
     *             expiry"), else null
     * @param max  null: no bound but the converter's ({@code must be at least <min>})
     */
    static Duration inRange(picocli.CommandLine.Model.CommandSpec spec, String flag, Duration value, String zero, Duration min,
            Duration max) {
        boolean ok = value.isZero() && zero != null || value.compareTo(min) >= 0 && (max == null || value.compareTo(max) <= 0);
        if (!ok) {
            String range = max == null ? "at least " + spelled(min) : "between " + spelled(min) + " and " + bound(max);
            throw new BadInputException(flag + " must be " + (zero == null ? "" : "0 (" + zero + ") or ") + range + ", got "
                    + given(spec, flag, value));
        }
        return value;
    }

    /** {@link #inRange} without a meaning for 0 below {@code min}. */
    static Duration inRange(picocli.CommandLine.Model.CommandSpec spec, String flag, Duration value, Duration min, Duration max) {
        return inRange(spec, flag, value, null, min, max);
    }

    /** The text {@code flag} was given on the command line, a plain number with its unit; else {@code value} {@link #spelled}. */
    private static String given(picocli.CommandLine.Model.CommandSpec spec, String flag, Duration value) {
        picocli.CommandLine.Model.OptionSpec o = spec == null ? null : spec.findOption(flag);
        if (o == null || o.originalStringValues().isEmpty() || !(o.converters()[0] instanceof TimeFlag t)) {
            return spelled(value);
        }
        String text = o.originalStringValues().getLast();
        Matcher m = TIME.matcher(text);
        return m.matches() && m.group(2) == null ? text + t.plain.symbol : text;
    }

    /**
     * A time as the grammar spells it, in the largest unit that leaves a whole part ({@code 86400s},
     * {@code 1.5s}, {@code 500ms}, {@code -0.5us} is {@code -500ns}); zero is {@code 0s}.
     */
    static String spelled(Duration d) {
        for (Unit u : new Unit[] {Unit.SECONDS, Unit.MILLIS, Unit.MICROS}) {
            if (d.abs().compareTo(u.chrono.getDuration()) >= 0) {
                return shown(d, u) + u.symbol;
            }
        }
        return d.isZero() ? "0s" : shown(d, Unit.NANOS) + Unit.NANOS.symbol;
    }

    /** An upper bound {@link #spelled}, with its whole days or hours ({@code 86400s (1 day)}). */
    private static String bound(Duration d) {
        long days = d.toDays();
        long hours = d.toHours();
        String whole = days > 0 && d.equals(Duration.ofDays(days)) ? io.kvtier.text.Plural.count(days, "day")
                : hours > 0 && d.equals(Duration.ofHours(hours)) ? io.kvtier.text.Plural.count(hours, "hour") : null;
        return spelled(d) + (whole == null ? "" : " (" + whole + ")");
    }

    /** The time in {@code unit}, exact, for a message that echoes a flag in its plain unit ({@code 5.99} for 5.99 ms). */
    static String shown(Duration d, Unit unit) {
        BigDecimal nanos = BigDecimal.valueOf(d.getSeconds()).multiply(BigDecimal.valueOf(1_000_000_000L)).add(BigDecimal.valueOf(d.getNano()));
        return nanos.divide(BigDecimal.valueOf(unit.nanos)).stripTrailingZeros().toPlainString();
    }
}
