package io.kvtier.cli;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The most a whole-number flag takes, for the line that refuses a value that is no whole number
 * ({@link Main#describe}: {@code --port: '1.5' is not a whole number up to 65535}) and, of a token
 * count ({@link TokenCount}), one past {@code int}'s most; the flag's own range check refuses a larger
 * one, with the same constant. A flag without it takes up to its type's most ({@code int}: 2147483647).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.METHOD})
@interface Most {

    /** The most, the constant the flag's range check uses. */
    long value() default Long.MAX_VALUE;

    /** A thread count: the most is 4 per core ({@link Checks#atMostFourPerCore}), this machine's, not {@link #value}. */
    boolean fourPerCore() default false;

    /**
     * What the flag takes where "up to N" would not be true, after "a whole number" ({@code --heads}:
     * "that divides --dim into an even head size", whose most depends on --dim); empty: "up to" the most.
     */
    String rule() default "";
}
