package io.kvtier.offload;

import java.util.Arrays;

/**
 * Least-squares fit of {@code y = sum_j beta_j x_j}, updated one observation at a time, older
 * observations fading by a forgetting factor (recursive least squares on exponentially weighted
 * normal equations). Used by {@link LoadCosts} for a step's time by its tokens and context, and
 * for a load's time by its blocks.
 *
 * <p>Features of very different scales (1, tokens, causal pairs) are handled by solving the
 * normal equations scaled to a unit diagonal, with a tiny ridge ({@value #RIDGE}) so that a
 * feature that never varied (all steps the same size, no decodes) gets a coefficient near 0
 * instead of making the system singular. A feature never seen (all zero) has coefficient 0.
 * Not thread-safe.
 */
final class OnlineLinearFit {

    private static final double RIDGE = 1e-6;

    private final int k;
    private final double forget;
    private final double[][] xtx;
    private final double[] xty;
    private long count;
    private double[] beta;

    /**
     * @param features number of features (an intercept is a feature that is always 1)
     * @param forget   weight kept by the past at each observation, in (0, 1]
     */
    OnlineLinearFit(int features, double forget) {
        if (features < 1 || !(forget > 0 && forget <= 1)) {
            throw new IllegalArgumentException("features " + features + ", forget " + forget);
        }
        this.k = features;
        this.forget = forget;
        this.xtx = new double[k][k];
        this.xty = new double[k];
    }

    /** Adds an observation: features {@code x} (length = features), value {@code y}. */
    void add(double[] x, double y) {
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < k; j++) {
                xtx[i][j] = forget * xtx[i][j] + x[i] * x[j];
            }
            xty[i] = forget * xty[i] + x[i] * y;
        }
        count++;
        beta = null;
    }

    /** Observations added so far. */
    long count() {
        return count;
    }

    /** The fitted coefficients (all 0 before the first observation); a fresh copy. */
    double[] coefficients() {
        if (beta == null) {
            beta = solve();
        }
        return beta.clone();
    }

    /** The fitted value at {@code x}. */
    double predict(double[] x) {
        double[] b = coefficients();
        double y = 0;
        for (int i = 0; i < k; i++) {
            y += b[i] * x[i];
        }
        return y;
    }

    private double[] solve() {
        double[] scale = new double[k];
        for (int i = 0; i < k; i++) {
            scale[i] = xtx[i][i] > 0 ? Math.sqrt(xtx[i][i]) : 0;
        }
        // Scaled system (D^-1 A D^-1 + ridge I) z = D^-1 b, beta = D^-1 z; unseen features stay 0.
        double[][] a = new double[k][k + 1];
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < k; j++) {
                a[i][j] = scale[i] == 0 || scale[j] == 0 ? (i == j ? 1 : 0) : xtx[i][j] / (scale[i] * scale[j]);
            }
            a[i][i] += RIDGE;
            a[i][k] = scale[i] == 0 ? 0 : xty[i] / scale[i];
        }
        for (int c = 0; c < k; c++) { // Gaussian elimination, partial pivoting (the matrix is positive definite)
            int p = c;
            for (int r = c + 1; r < k; r++) {
                if (Math.abs(a[r][c]) > Math.abs(a[p][c])) {
                    p = r;
                }
            }
            double[] t = a[c];
            a[c] = a[p];
            a[p] = t;
            for (int r = c + 1; r < k; r++) {
                double f = a[r][c] / a[c][c];
                for (int j = c; j <= k; j++) {
                    a[r][j] -= f * a[c][j];
                }
            }
        }
        double[] z = new double[k];
        for (int r = k - 1; r >= 0; r--) {
            double s = a[r][k];
            for (int j = r + 1; j < k; j++) {
                s -= a[r][j] * z[j];
            }
            z[r] = s / a[r][r];
        }
        double[] b = new double[k];
        for (int i = 0; i < k; i++) {
            b[i] = scale[i] == 0 ? 0 : z[i] / scale[i];
        }
        return b;
    }

    @Override
    public String toString() {
        return "fit" + Arrays.toString(coefficients()) + " over " + count;
    }
}
