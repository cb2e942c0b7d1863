package io.kvtier.cli;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * The converter of every flag that takes a time ({@code --remote-timeout}, {@code --remote-ttl},
 * {@code --remote-breaker-open}, {@code --shutdown-grace}, {@code --disk-scan-wait}, bench offload's
 * {@code --seconds-per-size}): a number with a unit, {@code ms} or {@code s} ({@code 500ms},
 * {@code 1.5s}), or a plain number in the flag's own unit, the one it took before units were
 * spelled (milliseconds for {@link Millis}, seconds for {@link Seconds}): the flags took one or the
 * other, by flag, and a script's {@code --remote-timeout 500} still means 500 ms. The value is exact
 * (decimal, not floating point) and a whole number of milliseconds ({@code 0.0005s} is refused, not
 * cut to 0). A sign is kept, for the flag's own range check to refuse in its words. Its refusal
 * says what is wrong; {@link Main#describe} puts the flag's name before it.
 */
abstract sealed class TimeFlag implements CommandLine.ITypeConverter<Duration> permits TimeFlag.Millis, TimeFlag.Seconds {

    /** Digits, an optional fraction, an optional unit spelled exactly ({@code 1e3}, {@code 1S}, {@code 1 s} are refused). */
    private static final Pattern TIME = Pattern.compile("(-?\\d+(?:\\.\\d+)?)(ms|s)?");

    private final boolean plainIsMillis;

    private TimeFlag(boolean plainIsMillis) {
        this.plainIsMillis = plainIsMillis;
    }

    /** A flag whose plain number is milliseconds. */
    static final class Millis extends TimeFlag {
        Millis() {
            super(true);
        }
    }

    /** A flag whose plain number is seconds. */
    static final class Seconds extends TimeFlag {
        Seconds() {
            super(false);
        }
    }

    @Override
    public Duration convert(String text) {
        Matcher m = TIME.matcher(text);
        if (!m.matches()) {
            throw new CommandLine.TypeConversionException("'" + text + "' is not a time (e.g. 500ms, 2s, 1.5s; a plain number is "
                    + (plainIsMillis ? "milliseconds" : "seconds") + ")");
        }
        boolean millis = m.group(2) == null ? plainIsMillis : m.group(2).equals("ms");
        BigDecimal ms = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(millis ? 1 : 1000));
        if (ms.signum() != 0 && ms.stripTrailingZeros().scale() > 0) {
            throw new CommandLine.TypeConversionException("'" + text + "' is " + ms.stripTrailingZeros().toPlainString()
                    + " ms, not a whole number of milliseconds");
        }
        try {
            return Duration.ofMillis(ms.longValueExact());
        } catch (ArithmeticException e) {
            throw new CommandLine.TypeConversionException("'" + text + "' is too long a time");
        }
    }

    /** The time in seconds, for a range check that says its range in seconds ({@link Checks#shown(double)} echoes it). */
    static double seconds(Duration d) {
        return d.toMillis() / 1000.0;
    }
}
