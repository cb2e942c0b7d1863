package io.kvtier.cli;

import io.kvtier.replay.Capacity;
import picocli.CommandLine;

/**
 * The converter of every flag that counts tokens ({@code --max-tokens}, {@code --max-batch-tokens},
 * the benches' {@code --prompt-tokens}, ...): the rule of token counts ({@link Capacity#count}:
 * {@code 4k} = 4,000, {@code 4Ki} = 4,096), as replay's tier sizes and {@code --context-tokens}
 * take them, to a whole number up to {@link Integer#MAX_VALUE}. Its refusal says what is wrong;
 * {@link Main#describe} puts the flag's name before it. The flag's own range (at least 1) is its
 * accessor's check.
 */
final class TokenCount implements CommandLine.ITypeConverter<Integer> {

    @Override
    public Integer convert(String text) {
        long n;
        try {
            n = Capacity.count(text);
        } catch (NumberFormatException e) {
            n = Long.MAX_VALUE; // the same line: it says what a count is
        }
        if (n > Integer.MAX_VALUE || n < Integer.MIN_VALUE) {
            throw new CommandLine.TypeConversionException("'" + text + "' is not a whole number of tokens up to " + Integer.MAX_VALUE
                    + " (e.g. 4096, 4k, 4Ki, 1M)");
        }
        return (int) n;
    }

    /** Whether {@code o} is converted by this class. */
    static boolean converts(CommandLine.Model.OptionSpec o) {
        for (CommandLine.ITypeConverter<?> c : o.converters()) {
            if (c instanceof TokenCount) {
                return true;
            }
        }
        return false;
    }
}
