/* sbf_numfmt.c -- see sbf_numfmt.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sbf_numfmt.h"

static const double pow10_[10] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

/* "%g" is "%.6g": with X the decimal exponent of v rounded to 6 significant digits, fixed
 * notation with 5 - X decimals when -4 <= X < 6 (else an exponent), trailing zeros and a
 * bare point removed. Here the 6 digits come from v x 10^(5 - X), one rounding of a product
 * by an exact power of ten (error below 1e-9 at that scale): unless the fraction is within
 * 1e-6 of one half, rounding it to the nearest integer gives printf's digits. */
int sbf_fmt_g(char *out, double v)
{
    double a = fabs(v);
    if (!(a >= 1e-4 && a < 999999.0))   /* zero, NaN, infinities and exponent forms */
        return snprintf(out, SBF_FMT_G_MAX, "%g", v);
    int X = (int)floor(log10(a));
    X = X < -4 ? -4 : X > 5 ? 5 : X;
    double sc = a * pow10_[5 - X];
    if (sc < 99999.0) {   /* log10 rounded up across a power of ten */
        if (X == -4)
            return snprintf(out, SBF_FMT_G_MAX, "%g", v);
        sc = a * pow10_[5 - --X];
    }
    double fl = floor(sc), frac = sc - fl;
    if (fabs(frac - 0.5) < 1e-6)
        return snprintf(out, SBF_FMT_G_MAX, "%g", v);
    uint32_t m = (uint32_t)fl + (frac > 0.5);
    if (m >= 1000000) {   /* rounded up to the next power of ten */
        m /= 10;
        ++X;
    }
    if (m < 100000 || m > 999999 || X > 5 || X < -4)
        return snprintf(out, SBF_FMT_G_MAX, "%g", v);
    char d[6];
    for (int i = 5; i >= 0; --i) {
        d[i] = (char)('0' + m % 10);
        m /= 10;
    }
    int n = 0;
    if (v < 0)
        out[n++] = '-';
    int last = 5;   /* the last digit that is not a trailing zero of the fraction */
    while (last > (X > 0 ? X : 0) && d[last] == '0')
        --last;
    if (X >= 0) {
        memcpy(out + n, d, (size_t)X + 1);
        n += X + 1;
        if (last > X) {
            out[n++] = '.';
            memcpy(out + n, d + X + 1, (size_t)(last - X));
            n += last - X;
        }
    } else {
        out[n++] = '0';
        out[n++] = '.';
        for (int i = 0; i < -X - 1; ++i)
            out[n++] = '0';
        memcpy(out + n, d, (size_t)last + 1);
        n += last + 1;
    }
    out[n] = '\0';
    return n;
}

int sbf_fmt_u32(char *out, uint32_t v)
{
    char t[10];
    int n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; ++i)
        out[i] = t[n - 1 - i];
    out[n] = '\0';
    return n;
}
