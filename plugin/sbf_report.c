/* sbf_report.c -- --report FILE.html: one self-contained page (inline CSS and SVG, no scripts,
 * nothing fetched) with the reads per category, each target's calibrated-score distribution with
 * the run's threshold, and the run's parameters. */
#include <stdio.h>
#include <string.h>

#include "sbf.h"
#include "sbf_summary.h"
#include "../filters/sbf_classify.h"

static void html_text(FILE *fp, const char *v)
{
    for (const unsigned char *p = (const unsigned char *)v; *p; ++p) {
        switch (*p) {
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '&': fputs("&amp;", fp); break;
        case '"': fputs("&quot;", fp); break;
        case '\'': fputs("&#39;", fp); break;
        default:
            if (*p < 0x20)
                fprintf(fp, "&#%u;", *p == '\t' || *p == '\n' ? *p : 0xfffd);
            else
                fputc(*p, fp);
        }
    }
}

static double pct(uint64_t n, uint64_t total) { return total ? 100.0 * (double)n / (double)total : 0.0; }

static const char *colour(int c, int n_targets)
{
    static const char *palette[] = {"#4477aa", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#ee6677", "#117733",
                                    "#882255"};
    if (c == n_targets)
        return "#999933";   /* multi */
    if (c == n_targets + 1)
        return "#bbbbbb";   /* none */
    return palette[c % 8];
}

/* Horizontal bars: one per category, with count and percentage. */
static void category_chart(const screen_summary_t *s, FILE *fp)
{
    int n = s->n_targets + 2, bar_h = 24, label_w = 180, plot_w = 520;
    uint64_t max = 1;
    for (int c = 0; c < n; ++c)
        if (s->cat[c] > max)
            max = s->cat[c];
    fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" "
                "aria-label=\"%s per category\">\n", label_w + plot_w + 170, n * (bar_h + 8) + 8, s->unit);
    for (int c = 0; c < n; ++c) {
        int y = 8 + c * (bar_h + 8);
        double w = (double)plot_w * (double)s->cat[c] / (double)max;
        fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"lab\">", label_w - 8, y + bar_h - 7);
        html_text(fp, s->names[c]);
        fprintf(fp, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", label_w, y,
                w < 1 && s->cat[c] ? 1.0 : w, bar_h, colour(c, s->n_targets));
        html_text(fp, s->names[c]);
        fprintf(fp, ": %llu</title></rect>", (unsigned long long)s->cat[c]);
        fprintf(fp, "<text x=\"%.1f\" y=\"%d\" class=\"val\">%llu (%.2f%%)</text>\n", label_w + w + 6, y + bar_h - 7,
                (unsigned long long)s->cat[c], pct(s->cat[c], s->frags));
    }
    fputs("</svg>\n", fp);
}

/* Columns of fragments per calibrated-score bin for one target (bar heights on a square-root
 * scale, so the few fragments between the peaks at 0 and far above the threshold stay visible),
 * the score axis with ticks every 5, and the run's threshold (--min-score) as a dashed vertical
 * line at its score, labelled; a threshold beyond the axis is drawn at its right end. */
static void score_chart(const screen_summary_t *s, int t, FILE *fp)
{
    const uint64_t *h = s->score_hist + (size_t)t * SUMMARY_BINS;
    const int w = 12, plot_h = 120, left = 40, top = 20, plot_w = SUMMARY_BINS * w;
    const double open = (SUMMARY_BINS - 1) * SUMMARY_BIN_WIDTH;   /* where the open last bin starts */
    const double px = (double)w / SUMMARY_BIN_WIDTH;                 /* pixels per score unit */
    const int base = top + plot_h;                                   /* the x axis */
    uint64_t max = 1;
    for (int b = 0; b < SUMMARY_BINS; ++b)
        if (h[b] > max)
            max = h[b];
    double top_root = 0;
    for (uint64_t r = 1; r * r < max; ++r)
        top_root = (double)r + 1;
    if (top_root < 1)
        top_root = 1;
    fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" "
                "aria-label=\"calibrated score distribution\">\n", left + plot_w + 24, base + 40);
    fprintf(fp, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", left, base, left + plot_w, base);
    for (int b = 0; b < SUMMARY_BINS; ++b) {
        double root = 0;
        while ((root + 1) * (root + 1) <= (double)h[b])
            root += 1;
        double bh = h[b] ? (double)plot_h * (root + (h[b] > root * root ? 0.5 : 0)) / top_root : 0;
        if (h[b] && bh < 1)
            bh = 1;
        fprintf(fp, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>", left + b * w + 1,
                base - bh, w - 2, bh, colour(t, s->n_targets));
        if (b < SUMMARY_BINS - 1)
            fprintf(fp, "score %g-%g", b * SUMMARY_BIN_WIDTH, (b + 1) * SUMMARY_BIN_WIDTH);
        else
            fprintf(fp, "score %g+", open);
        fprintf(fp, ": %llu</title></rect>\n", (unsigned long long)h[b]);
    }
    for (int v = 0; v <= (int)open; v += 5) {   /* ticks; the last one labels the open bin */
        double x = left + v * px;
        fprintf(fp, "<line class=\"tick\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#666\"/>"
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\" class=\"val\">%d%s</text>\n",
                x, base, x, base + 4, x, base + 16, v < (int)open ? "middle" : "start", v, v < (int)open ? "" : "+");
    }
    fprintf(fp, "<text x=\"%d\" y=\"%d\" class=\"val\">calibrated score (-log10 chance; ss:f)</text>\n", left,
            base + 33);
    /* the tallest bin's count, short enough for the margin: 9876, 98.8k, 12.3M (bars: exact) */
    char count[32];
    if (max < 10000) {
        snprintf(count, sizeof count, "%llu", (unsigned long long)max);
    } else {
        static const char units[] = "kMGTPE";
        double m = (double)max / 1e3;
        int u = 0;
        while (m >= 999.5 && u < 5) {
            m /= 1e3;
            ++u;
        }
        snprintf(count, sizeof count, "%.3g%c", m, units[u]);
    }
    fprintf(fp, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"val\">%s</text>\n", left - 4, top + 10, count);
    /* the threshold */
    const double thr = s->rule->min_score;
    const int beyond = thr > open;
    const double tx = left + (beyond ? (double)plot_w : thr * px);
    fprintf(fp, "<line class=\"threshold\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#cc3311\" "
                "stroke-width=\"1.5\" stroke-dasharray=\"4 3\"><title>--min-score %g: a target passes from this "
                "score on</title></line>\n", tx, top - 14, tx, base + 4, thr);
    const int right_side = tx < left + plot_w - 110;
    fprintf(fp, "<text class=\"threshold-label\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\" "
                "style=\"font: 11px sans-serif; fill: #cc3311\">threshold %g (--min-score)%s</text>\n",
            right_side ? tx + 4 : tx - 4, top - 9, right_side ? "start" : "end", thr,
            beyond ? ", beyond the axis" : "");
    fputs("</svg>\n", fp);
}

static void row(FILE *fp, const char *key, const char *value)
{
    fprintf(fp, "<tr><th>%s</th><td>", key);
    html_text(fp, value ? value : "");
    fputs("</td></tr>\n", fp);
}

void summary_write_html(const screen_summary_t *s, FILE *fp)
{
    char buf[512];
    fprintf(fp, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>sbf %s report</title>\n"
                "<style>\n"
                "body { font-family: sans-serif; margin: 2em; color: #222; max-width: 60em; }\n"
                "h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.5em; }\n"
                "table { border-collapse: collapse; } th, td { text-align: left; padding: 0.2em 1em 0.2em 0; }\n"
                "th { font-weight: normal; color: #555; } td.n { text-align: right; }\n"
                "svg .lab { font: 13px sans-serif; } svg .val { font: 11px sans-serif; fill: #333; }\n"
                "svg .axis { stroke: #666; } .targets { display: flex; flex-wrap: wrap; gap: 1.5em; }\n"
                "figure { margin: 0; }\n"
                "</style>\n</head>\n<body>\n", s->cmd);
    fprintf(fp, "<h1>sbf %s: %llu %s screened</h1>\n", s->cmd, (unsigned long long)s->frags, s->unit);
    fprintf(fp, "<h2>%s per category</h2>\n", s->unit);
    category_chart(s, fp);
    fprintf(fp, "<table>\n<tr><th>category</th><th>%s</th><th>%%</th><th>passing</th><th>shared</th></tr>\n", s->unit);
    for (int c = 0; c < s->n_targets + 2; ++c) {
        fputs("<tr><td>", fp);
        html_text(fp, s->names[c]);
        fprintf(fp, "</td><td class=\"n\">%llu</td><td class=\"n\">%.2f</td>", (unsigned long long)s->cat[c],
                pct(s->cat[c], s->frags));
        if (c < s->n_targets)
            fprintf(fp, "<td class=\"n\">%llu</td><td class=\"n\">%llu</td>", (unsigned long long)s->hits[c],
                    (unsigned long long)s->shared[c]);
        else
            fputs("<td></td><td></td>", fp);
        fputs("</tr>\n", fp);
    }
    fputs("</table>\n", fp);
    /* the calibrated score per target: what the rule decides on */
    sbf_classify_opt_describe(s->rule, buf, sizeof buf);
    fprintf(fp, "<h2>Calibrated score per target</h2>\n<p>Fragments per bin of their calibrated score in each "
                "target: S = -log10(R &times; P(X &ge; h)), how unlikely it is that chance alone (the target's "
                "false-positive rate) gives h or more hits among the fragment's n valid k-mers, in a panel of R "
                "targets. It is the score the rule compares with <code>--min-score</code> and the one the "
                "<code>ss:f</code> tag carries (doc/classification.md, &ldquo;Scoring&rdquo;). Bins of %g from 0 "
                "to %g, each holding the scores from its left edge up to the next; the last bin holds every "
                "score of %g or more (a read of the target usually scores far more: a 150 bp read with every k-mer found, about 100). A "
                "fragment without a hit in a target scores 0 there and falls in the first bin. The dashed line is "
                "this run's threshold, score &ge; %g; a target passes when the fragment reaches it and the rest "
                "of the rule (",
            SUMMARY_BIN_WIDTH, (SUMMARY_BINS - 1) * SUMMARY_BIN_WIDTH, (SUMMARY_BINS - 1) * SUMMARY_BIN_WIDTH,
            s->rule->min_score);
    html_text(fp, buf);
    fputs(") holds. Bar heights on a square-root scale; fragments without a valid k-mer are left out.", fp);
    if (s->rule->mates != SBF_MATES_SUMMED)
        fprintf(fp, " Pairs are scored here on both mates' k-mers and hits summed, while this run's rule "
                    "(mates: %s) scores each mate alone: a pair's bin can differ from the score it was judged by.",
                sbf_mates_name(s->rule->mates));
    fputs("</p>\n<div class=\"targets\">\n", fp);
    for (int t = 0; t < s->n_targets; ++t) {
        fputs("<figure>\n", fp);
        score_chart(s, t, fp);
        fputs("<figcaption>", fp);
        html_text(fp, s->names[t]);
        fputs("</figcaption>\n</figure>\n", fp);
    }
    fputs("</div>\n<h2>Run</h2>\n<table>\n", fp);
    snprintf(buf, sizeof buf, "sbf %s (%s)", SBF_VERSION, s->cmd);
    row(fp, "program", buf);
    row(fp, "mode", s->mode);
    row(fp, "index", s->index_path);
    row(fp, "input", s->inputs[0]);
    if (s->inputs[1])
        row(fp, "input (mates 2)", s->inputs[1]);
    row(fp, "engine", s->engine);
    sbf_classify_opt_describe(s->rule, buf, sizeof buf);
    row(fp, "scoring", buf);
    if (s->switches)
        row(fp, "test switches set", s->switches);
    snprintf(buf, sizeof buf, "%llu %s, %llu reads, %llu bases", (unsigned long long)s->frags, s->unit,
             (unsigned long long)s->reads_in, (unsigned long long)s->bases_in);
    row(fp, "in", buf);
    snprintf(buf, sizeof buf, "%llu %s, %llu reads, %llu bases", (unsigned long long)s->frags_out, s->unit,
             (unsigned long long)s->reads_out, (unsigned long long)s->bases_out);
    row(fp, "out", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->no_kmer);
    row(fp, "without a valid k-mer", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->chimeric);
    row(fp, "multi with parts of different targets (chimeras)", buf);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->extras);
    row(fp, "secondary/supplementary records (not scored)", buf);
    snprintf(buf, sizeof buf, "%.2f s, %.0f reads/s", s->seconds, s->seconds > 0 ? (double)s->reads_in / s->seconds : 0.0);
    row(fp, "time", buf);
    fputs("</table>\n</body>\n</html>\n", fp);
}
