package io.kvtier.cli;

import io.kvtier.replay.Capacity;
import picocli.CommandLine;

/**
 * The converter of every flag that counts tokens ({@code --max-tokens}, {@code --max-batch-tokens},
 * the benches' {@code --prompt-tokens}, ...): the rule of token counts ({@link Capacity#count}:
 * {@code 4k} = 4,000, {@code 4Ki} = 4,096, exact), as replay's tier sizes and {@code --context-tokens}
 * take them, to a whole number up to {@link Integer#MAX_VALUE}. Its refusal says what is wrong;
 * {@link Main#describe} puts the flag's name before it. The flag's own range (at least 1) is its
 * accessor's check; a flag with a {@link Most} (a fixed most) names it for a value past {@code int}'s too
 * ({@link Main#describe}: {@code --seq-len 2147483648} said "at most 2,147,483,647 tokens" of a flag that
 * takes 4194304).
 */
final class TokenCount implements CommandLine.ITypeConverter<Integer> {

    @Override
    public Integer convert(String text) {
        try {
            return (int) Capacity.count(text, Integer.MAX_VALUE);
        } catch (NumberFormatException e) {
            boolean tooLarge = e.getMessage().contains("' is too large:");
            throw tooLarge ? new TooLarge(e.getMessage()) : new CommandLine.TypeConversionException(e.getMessage());
        }
    }

    /** A count past {@code int}'s most: a flag with its own {@link Most} says that one instead. */
    static final class TooLarge extends CommandLine.TypeConversionException {
        TooLarge(String message) {
            super(message);
        }
    }
}
