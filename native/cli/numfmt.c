/* numfmt.c: numbers as text for the command's outputs.
 *
 * Machine outputs (CSV, JSON) need numbers that read back exactly, and as short as
 * possible: 0.1 stays "0.1" rather than "0.10000000000000001". numfmt_double finds the
 * fewest decimals by exact integer scaling (no printf) for everyday magnitudes and falls
 * back to printf with 16 then 17 digits (checked by strtod) for the rest. A CSV export
 * writes millions of numbers: this is most of its time. People need fewer digits (numfmt_human) and
 * thousands separators (numfmt_count). Times stored in integer nanoseconds are shown in
 * milliseconds by integer arithmetic (numfmt_ns_as_ms), exactly. The program never
 * calls setlocale, so the decimal point is always '.'.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>

/* Writes r x 10^-k (r an integer, 0 <= k <= 22) in fixed notation without trailing zeros. */
static void write_scaled(char buf[NUMFMT_BYTES], int negative, uint64_t r, int k) {
    char digits[32];
    int n = 0;
    do {
        digits[n++] = (char)('0' + r % 10u);
        r /= 10u;
    } while (r);
    while (n <= k) digits[n++] = '0'; /* at least one digit before the point */
    int first = 0;                    /* trailing zeros of the fraction go */
    while (first < k && digits[first] == '0') first++;
    int len = 0;
    if (negative) buf[len++] = '-';
    for (int i = n - 1; i >= first; i--) {
        if (i == k - 1) buf[len++] = '.';
        buf[len++] = digits[i];
    }
    buf[len] = '\0';
}

char *numfmt_double(char buf[NUMFMT_BYTES], double v) {
    if (isnan(v)) {
        snprintf(buf, NUMFMT_BYTES, "nan");
        return buf;
    }
    if (isinf(v)) {
        snprintf(buf, NUMFMT_BYTES, v > 0 ? "inf" : "-inf");
        return buf;
    }
    if (v == 0.0) {
        snprintf(buf, NUMFMT_BYTES, signbit(v) ? "-0" : "0");
        return buf;
    }
    /* Fast exact path, no printf: the fewest decimals k such that r = round(v * 10^k)
     * gives r / 10^k == v. Then the text "r x 10^-k" reads back as v: r (below 2^53) and
     * 10^k (k <= 22) are exact doubles, so r / 10^k is the correctly rounded value of the
     * rational r / 10^k, which is also what strtod returns for its decimal text. The
     * fewest decimals is the fewest significant digits in fixed notation, i.e. the
     * shortest text. Kept to 1e-4 <= |v| < 1e15, where %g would not use an exponent. */
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    double a = fabs(v);
    int try16 = 1; /* whether a 16-digit text is still possible */
    if (a >= 1e-4 && a < 1e15) {
        for (int k = 0; k <= 22; k++) {
            double scaled = a * pow10[k];
            if (scaled >= 9007199254740992.0) { /* 2^53: r would not be exact */
                /* Every text of up to 16 digits with r < 2^53 failed; one with 16 digits
                 * remains possible only if this k gives r in [2^53, 1e16). */
                try16 = scaled < 1e16;
                break;
            }
            /* Below 2^50 the product's rounding and v's own distance from the decimal add
             * up to less than 0.5, so nearbyint finds r; above, r may be a neighbour. */
            double r = nearbyint(scaled);
            int spread = scaled < 1125899906842624.0 ? 0 : 2;
            for (int d = -spread; d <= spread; d++) {
                double c = r + d;
                if (c >= 0 && c < 9007199254740992.0 && c / pow10[k] == a) {
                    write_scaled(buf, v < 0, (uint64_t)c, k);
                    return buf;
                }
            }
        }
        if (try16) {
            snprintf(buf, NUMFMT_BYTES, "%.16g", v);
            if (strtod(buf, NULL) == v) return buf;
        }
    } else {
        /* 16 or 17 significant digits (or an exponent): printf, checked by strtod. */
        for (int digits = 15; digits < 17; digits++) {
            snprintf(buf, NUMFMT_BYTES, "%.*g", digits, v);
            if (strtod(buf, NULL) == v) return buf;
        }
    }
    snprintf(buf, NUMFMT_BYTES, "%.17g", v);
    return buf;
}

char *numfmt_human(char buf[NUMFMT_BYTES], double v) {
    double a = fabs(v);
    if (!isfinite(v)) return numfmt_double(buf, v);
    if (a >= 1e5 && a < 1e15)
        snprintf(buf, NUMFMT_BYTES, "%.0f", v);
    else if (a == 0.0 || a >= 1e-4)
        snprintf(buf, NUMFMT_BYTES, "%.6g", v);
    else
        snprintf(buf, NUMFMT_BYTES, "%.4g", v);
    return buf;
}

char *numfmt_ns_as_ms(char buf[NUMFMT_BYTES], int64_t ns) {
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(buf, NUMFMT_BYTES, "%s%llu.%06llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000000u),
             (unsigned long long)(a % 1000000u));
    return buf;
}

char *numfmt_count(char buf[NUMFMT_BYTES], uint64_t n) {
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
    int out = 0;
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0) buf[out++] = ',';
        buf[out++] = digits[i];
    }
    buf[out] = '\0';
    return buf;
}
