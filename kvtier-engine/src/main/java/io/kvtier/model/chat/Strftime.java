package io.kvtier.model.chat;

import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * Python's {@code time.strftime} for the directives chat templates use (Llama 3's
 * {@code strftime_now("%d %b %Y")}), in the C locale: {@code %d %e %m %y %Y %b %B %a %A %H %I
 * %M %S %p %j %%}. Any other directive is copied as is.
 */
final class Strftime {

    private Strftime() {
    }

    static String format(String pattern, ZonedDateTime t) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < pattern.length(); i++) {
            char c = pattern.charAt(i);
            if (c != '%' || i + 1 >= pattern.length()) {
                sb.append(c);
                continue;
            }
            char d = pattern.charAt(++i);
            String f = switch (d) {
                case 'd' -> "dd";
                case 'e' -> null;
                case 'm' -> "MM";
                case 'y' -> "yy";
                case 'Y' -> "yyyy";
                case 'b' -> "MMM";
                case 'B' -> "MMMM";
                case 'a' -> "EEE";
                case 'A' -> "EEEE";
                case 'H' -> "HH";
                case 'I' -> "hh";
                case 'M' -> "mm";
                case 'S' -> "ss";
                case 'p' -> "a";
                case 'j' -> "DDD";
                default -> "";
            };
            if (d == 'e') {
                sb.append(String.format("%2d", t.getDayOfMonth()));
            } else if (d == '%') {
                sb.append('%');
            } else if (f.isEmpty()) {
                sb.append('%').append(d);
            } else {
                sb.append(DateTimeFormatter.ofPattern(f, Locale.US).format(t));
            }
        }
        return sb.toString();
    }
}
