/* sbf_report.c -- --report FILE.html: one self-contained page (inline CSS and SVG, no scripts,
 * nothing fetched) with the reads per category, each target's score distribution and the run's
 * parameters. */
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

/* Columns of fragments per score bin for one target (bar heights on a square-root scale, so
 * the few reads between the peaks at 0 and 1 stay visible). */
static void score_chart(const screen_summary_t *s, int t, FILE *fp)
{
    const uint64_t *h = s->score_hist + (size_t)t * SUMMARY_BINS;
    int w = 16, plot_h = 120, left = 40;
    uint64_t max = 1;
    for (int b = 0; b < SUMMARY_BINS; ++b)
        if (h[b] > max)
            max = h[b];
    double top = 0;
    for (uint64_t r = 1; r * r < max; ++r)
        top = (double)r + 1;
    if (top < 1)
        top = 1;
    fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" "
                "aria-label=\"score distribution\">\n", left + SUMMARY_BINS * w + 20, plot_h + 40);
    fprintf(fp, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", left, plot_h + 5,
            left + SUMMARY_BINS * w, plot_h + 5);
    for (int b = 0; b < SUMMARY_BINS; ++b) {
        double root = 0;
        while ((root + 1) * (root + 1) <= (double)h[b])
            root += 1;
        double bh = h[b] ? (double)plot_h * (root + (h[b] > root * root ? 0.5 : 0)) / top : 0;
        if (h[b] && bh < 1)
            bh = 1;
        fprintf(fp, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>score %.2f-%.2f: "
                    "%llu</title></rect>\n", left + b * w + 1, plot_h + 5 - bh, w - 2, bh, colour(t, s->n_targets),
                (double)b / SUMMARY_BINS, (double)(b + 1) / SUMMARY_BINS, (unsigned long long)h[b]);
    }
    fprintf(fp, "<text x=\"%d\" y=\"%d\" class=\"val\">0</text><text x=\"%d\" y=\"%d\" class=\"val\">0.5</text>"
                "<text x=\"%d\" y=\"%d\" class=\"val\">1</text>\n", left - 3, plot_h + 22,
            left + SUMMARY_BINS * w / 2 - 8, plot_h + 22, left + SUMMARY_BINS * w - 6, plot_h + 22);
    fprintf(fp, "<text x=\"%d\" y=\"%d\" class=\"val\">score (k-mers found / valid k-mers)</text>\n", left,
            plot_h + 37);
    fprintf(fp, "<text x=\"2\" y=\"14\" class=\"val\">%llu</text>\n", (unsigned long long)max);
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
    fputs("<h2>Score distribution per target</h2>\n<p>Fragments per score bin (square-root scale); fragments "
          "without a valid k-mer are left out.</p>\n<div class=\"targets\">\n",
          fp);
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
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->extras);
    row(fp, "secondary/supplementary records (not scored)", buf);
    snprintf(buf, sizeof buf, "%.2f s, %.0f reads/s", s->seconds, s->seconds > 0 ? (double)s->reads_in / s->seconds : 0.0);
    row(fp, "time", buf);
    fputs("</table>\n</body>\n</html>\n", fp);
}
