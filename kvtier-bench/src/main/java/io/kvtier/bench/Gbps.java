package io.kvtier.bench;

import java.math.BigDecimal;
import java.math.MathContext;

/** Bandwidth figures for the bench tables: three significant digits, so a slow run never prints 0.00. */
final class Gbps {
    private Gbps() {
    }

    /** {@code v} (GB/s) to three significant digits, without an exponent: 12.3, 1.23, 0.00423; 0 as "0". */
    static String of(double v) {
        if (!Double.isFinite(v) || v == 0) {
            return v == 0 ? "0" : Double.toString(v);
        }
        return new BigDecimal(v).round(new MathContext(3)).stripTrailingZeros().toPlainString();
    }
}
