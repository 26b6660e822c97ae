/* SPDX-License-Identifier: MIT */
/*
 * Flame graph SVG writer. Layout is breadth-first over the tree, children
 * in name order; frames narrower than min_px are merged per parent into
 * one "[N small frames]" frame (not descended), so the drawn frame count is
 * bounded by width/min_px per level whatever the input size, and widths
 * still sum to the parent. The page script is hand-written and scoped to
 * its own <svg>, so several graphs can live inline in one HTML report.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flame_priv.h"
#include "rxray/analyze.h"
#include "rxray/afile.h"

#define FLAME_FH 16   /* frame height, px */
#define FLAME_PAD 10  /* left/right margin, px */
#define FLAME_CHAR 7.0 /* approx. width of one 12 px Verdana character */

struct frec {
	uint32_t node;   /* node in b (or the only set) */
	uint32_t anode;  /* same path in a (diff), FLAME_NONE when absent */
	uint32_t merged; /* 0 = a real frame, else how many frames it merges */
	uint32_t depth;
	double x, v, a;  /* start and width in weight units; a's value (diff) */
};

struct layout {
	struct frec *r;
	size_t n, cap;
	uint32_t maxdepth;
};

static int rec_push(struct layout *l, struct frec rec)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 1024;
		struct frec *nr = realloc(l->r, nc * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		l->r = nr;
		l->cap = nc;
	}
	l->r[l->n++] = rec;
	if (rec.depth > l->maxdepth)
		l->maxdepth = rec.depth;
	return 0;
}

static double node_a(const struct rxa_flame *a, uint32_t an)
{
	return (a && an != FLAME_NONE) ? a->nodes[an].total : 0;
}

static int layout_build(const struct rxa_flame *f, const struct rxa_flame *a, double min_w,
			struct layout *l)
{
	int rc = rec_push(l, (struct frec){.node = 0, .anode = a ? 0 : FLAME_NONE,
					   .v = f->nodes[0].total, .a = node_a(a, 0)});
	for (size_t i = 0; !rc && i < l->n; i++) {
		struct frec p = l->r[i];
		if (p.merged)
			continue;
		uint32_t nc;
		uint32_t *kids = rxa_flame_children_sorted(f, p.node, &nc);
		if (nc && !kids)
			return -ENOMEM;
		double x = p.x, mv = 0, ma = 0;
		uint32_t mcount = 0, mnode = 0, manode = FLAME_NONE;
		for (uint32_t k = 0; k < nc && !rc; k++) {
			const struct flame_node *c = &f->nodes[kids[k]];
			if (!(c->total > 0))
				continue;
			uint32_t an = FLAME_NONE;
			if (a && p.anode != FLAME_NONE) {
				const char *nm = flame_name(f, c->name);
				an = rxa_flame_child_find(a, p.anode, nm, f->name_len[c->name]);
			}
			if (c->total < min_w) {
				mv += c->total;
				ma += node_a(a, an);
				mnode = kids[k];
				manode = an;
				mcount++;
				continue;
			}
			rc = rec_push(l, (struct frec){.node = kids[k], .anode = an, .depth = p.depth + 1,
						       .x = x, .v = c->total, .a = node_a(a, an)});
			x += c->total;
		}
		free(kids);
		if (!rc && mcount)
			rc = rec_push(l, (struct frec){.node = mnode, .anode = manode, .merged = mcount,
						       .depth = p.depth + 1, .x = x, .v = mv, .a = ma});
	}
	return rc;
}

static void colour_hot(const char *name, size_t len, char *buf, size_t n)
{
	uint32_t h = rxa_flame_hash(name, len);
	unsigned r = 205 + (h & 0xff) * 50 / 255;
	unsigned g = ((h >> 8) & 0xff) * 230 / 255;
	unsigned b = ((h >> 16) & 0xff) * 55 / 255;
	snprintf(buf, n, "rgb(%u,%u,%u)", r, g, b);
}

static void colour_diff(double a, double b, char *buf, size_t n)
{
	double m = fmax(fabs(a), fabs(b));
	double r = m > 0 ? (b - a) / m : 0;
	unsigned k = (unsigned)lround(255 * (1 - fmin(fabs(r), 1) * 0.85));
	if (r > 0.005)
		snprintf(buf, n, "rgb(255,%u,%u)", k, k);
	else if (r < -0.005)
		snprintf(buf, n, "rgb(%u,%u,255)", k, k);
	else
		snprintf(buf, n, "rgb(250,250,250)");
}

static void fmt_val(char *buf, size_t n, double v)
{
	if (fabs(v) >= 100 || v == floor(v))
		snprintf(buf, n, "%.0f", v);
	else if (fabs(v) >= 1)
		snprintf(buf, n, "%.2f", v);
	else
		snprintf(buf, n, "%.3g", v);
}

/* The page script; scoped to its own <svg> (see the file comment). */
static const char flame_js[] =
	"(function(){\n"
	"var sc=document.currentScript,svg=sc&&sc.ownerSVGElement?sc.ownerSVGElement:document.documentElement;\n"
	"var W=+svg.getAttribute('data-fw'),P=+svg.getAttribute('data-pad'),T=+svg.getAttribute('data-total');\n"
	"var U=svg.getAttribute('data-units'),D=svg.getAttribute('data-diff')==='1',CW=+svg.getAttribute('data-cw');\n"
	"var gs=svg.querySelectorAll('g.rxf-f'),n=gs.length,F=[],root=null;\n"
	"for(var i=0;i<n;i++){var g=gs[i],r=g.querySelector('rect');\n"
	" var f={g:g,x:+g.getAttribute('data-x'),v:+g.getAttribute('data-v'),d:+g.getAttribute('data-d'),\n"
	"  a:g.hasAttribute('data-a')?+g.getAttribute('data-a'):0,n:g.querySelector('title').textContent.split('\\n')[0],\n"
	"  r:r,t:g.querySelector('text'),fill:r.getAttribute('fill')};\n"
	" g.setAttribute('data-i',i);F.push(f);if(f.d===0)root=f;}\n"
	"var det=svg.querySelector('.rxf-det'),mat=svg.querySelector('.rxf-mat'),re=null;\n"
	"function fmt(v){var a=Math.abs(v);return a>=100||v===Math.floor(v)?v.toFixed(0):a>=1?v.toFixed(2):v.toPrecision(3);}\n"
	"function label(f,w){var c=Math.floor((w-6)/CW);if(c<3)return '';return f.n.length<=c?f.n:f.n.substr(0,c-2)+'..';}\n"
	"function place(f,x0,v0){var s=(W-2*P)/v0,x=P+(f.x-x0)*s,w=f.v*s;\n"
	" f.r.setAttribute('x',x.toFixed(2));f.r.setAttribute('width',Math.max(w,0).toFixed(2));\n"
	" if(f.t){f.t.setAttribute('x',(x+3).toFixed(2));f.t.textContent=label(f,w);}f.g.style.display='';}\n"
	"function zoom(z){var e=z.v*1e-9;for(var i=0;i<n;i++){var f=F[i];\n"
	" if(f.d>=z.d&&f.x>=z.x-e&&f.x+f.v<=z.x+z.v+e){place(f,z.x,z.v);f.g.classList.remove('rxf-anc');}\n"
	" else if(f.d<z.d&&f.x<=z.x+e&&f.x+f.v>=z.x+z.v-e){place(f,f.x,f.v);f.g.classList.add('rxf-anc');}\n"
	" else f.g.style.display='none';}}\n"
	"function clear(){re=null;for(var i=0;i<n;i++)F[i].r.setAttribute('fill',F[i].fill);mat.textContent=' ';}\n"
	"function search(){var t=window.prompt('Search frames (regular expression)',re?re.source:'');\n"
	" if(t===null)return;if(t===''){clear();return;}\n"
	" try{re=new RegExp(t);}catch(x){mat.textContent='bad expression';return;}\n"
	" var iv=[];for(var i=0;i<n;i++){var f=F[i];if(re.test(f.n)){f.r.setAttribute('fill','rgb(230,0,230)');iv.push([f.x,f.x+f.v]);}\n"
	"  else f.r.setAttribute('fill',f.fill);}\n"
	" iv.sort(function(p,q){return p[0]-q[0];});var sum=0,end=-Infinity;\n"
	" for(var k=0;k<iv.length;k++){var s=Math.max(iv[k][0],end);if(iv[k][1]>s)sum+=iv[k][1]-s;if(iv[k][1]>end)end=iv[k][1];}\n"
	" mat.textContent='Matched '+iv.length+' frames: '+fmt(sum)+' '+U+' ('+(T>0?100*sum/T:0).toFixed(1)+'%)';}\n"
	"function pick(e){var t=e.target;return t&&t.closest?t.closest('g.rxf-f'):null;}\n"
	"svg.addEventListener('mouseover',function(e){var g=pick(e);if(!g)return;var f=F[+g.getAttribute('data-i')];\n"
	" var s=f.n+': '+fmt(f.v)+' '+U+' ('+(T>0?100*f.v/T:0).toFixed(2)+'%)';\n"
	" if(D){var d=f.v-f.a;s+='  A '+fmt(f.a)+' -> B '+fmt(f.v)+' ('+(d>=0?'+':'')+fmt(d)+')';}det.textContent=s;});\n"
	"svg.addEventListener('mouseout',function(e){if(pick(e))det.textContent=' ';});\n"
	"svg.addEventListener('click',function(e){var g=pick(e);if(g){zoom(F[+g.getAttribute('data-i')]);return;}\n"
	" var c=e.target&&e.target.getAttribute?e.target.getAttribute('class'):'';\n"
	" if(c==='rxf-reset'&&root)zoom(root);else if(c==='rxf-search')search();});\n"
	"if(svg===document.documentElement)window.addEventListener('keydown',function(e){\n"
	" if((e.ctrlKey||e.metaKey)&&e.key==='f'){e.preventDefault();search();}\n"
	" else if(e.key==='Escape'){clear();if(root)zoom(root);}});\n"
	"svg.setAttribute('data-rxf-ready','1');\n"
	"})();\n";

static void svg_frame(FILE *o, const struct rxa_flame *f, const struct frec *r, double total,
		      double scale, int height, const char *units, bool diff)
{
	const char *nm = r->node ? flame_name(f, f->nodes[r->node].name) : "all";
	size_t nlen = r->node ? f->name_len[f->nodes[r->node].name] : 3;
	char mname[48], fill[32], vb[32], pct[32];
	if (r->merged > 1) {
		snprintf(mname, sizeof(mname), "[%u small frames]", r->merged);
		nm = mname;
		nlen = strlen(mname);
	}
	if (diff)
		colour_diff(r->a, r->v, fill, sizeof(fill));
	else if (r->merged > 1)
		snprintf(fill, sizeof(fill), "rgb(200,200,200)");
	else if (!r->node)
		snprintf(fill, sizeof(fill), "rgb(235,235,220)");
	else
		colour_hot(nm, nlen, fill, sizeof(fill));
	fmt_val(vb, sizeof(vb), r->v);
	snprintf(pct, sizeof(pct), "%.2f%%", total > 0 ? 100 * r->v / total : 0);
	double x = FLAME_PAD + r->x * scale, w = r->v * scale;
	int y = height - 36 - (int)(r->depth + 1) * FLAME_FH;
	fprintf(o, "<g class=\"rxf-f\" data-x=\"%.10g\" data-v=\"%.10g\" data-d=\"%u\"", r->x, r->v,
		r->depth);
	if (diff)
		fprintf(o, " data-a=\"%.10g\"", r->a);
	fputs("><title>", o);
	rxa_xml_put(o, nm, nlen);
	fprintf(o, "\n%s %s (%s)", vb, units, pct);
	if (diff) {
		char ab[32], db[32];
		fmt_val(ab, sizeof(ab), r->a);
		fmt_val(db, sizeof(db), r->v - r->a);
		fprintf(o, "\nA %s, B %s, delta %s%s", ab, vb, r->v >= r->a ? "+" : "", db);
	}
	fprintf(o, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>",
		x, y, w, FLAME_FH - 1, fill);
	fprintf(o, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + FLAME_FH - 4);
	size_t fit = w > 6 ? (size_t)((w - 6) / FLAME_CHAR) : 0;
	if (fit >= 3) {
		if (nlen <= fit) {
			rxa_xml_put(o, nm, nlen);
		} else {
			/* cut on a UTF-8 boundary */
			size_t cut = fit - 2;
			while (cut && ((unsigned char)nm[cut] & 0xc0) == 0x80)
				cut--;
			rxa_xml_put(o, nm, cut);
			fputs("..", o);
		}
	}
	fputs("</text></g>\n", o);
}

static int svg_write(const struct rxa_flame *f, const struct rxa_flame *a, FILE *o,
		     const struct rxa_flame_svg_opts *opt)
{
	struct rxa_flame_svg_opts d = {0};
	if (!opt)
		opt = &d;
	double total = f ? f->nodes[0].total : 0;
	if (!f || !(total > 0))
		return -EINVAL;
	int width = opt->width > 0 ? opt->width : 1200;
	double min_px = opt->min_px > 0 ? opt->min_px : 0.3;
	double scale = (width - 2 * FLAME_PAD) / total;
	const char *units = opt->units ? opt->units : "samples";
	const char *title = opt->title ? opt->title : (a ? "Differential flame graph" : "Flame graph");
	bool diff = a != NULL;
	struct layout l = {0};
	int rc = layout_build(f, a, min_px / scale, &l);
	if (rc)
		goto out;
	int top = opt->subtitle || diff ? 64 : 48;
	int height = top + (int)(l.maxdepth + 1) * FLAME_FH + 36;

	fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		   "height=\"%d\" viewBox=\"0 0 %d %d\" data-fw=\"%d\" data-pad=\"%d\" "
		   "data-total=\"%.10g\" data-cw=\"%.1f\" data-diff=\"%d\" data-units=\"",
		width, height, width, height, width, FLAME_PAD, total, FLAME_CHAR, diff);
	rxa_xml_puts(o, units);
	fputs("\">\n<style>\n"
	      ".rxf-f text{font:12px Verdana,sans-serif;fill:#000;pointer-events:none}\n"
	      ".rxf-f:hover rect{stroke:#000;stroke-width:0.5;cursor:pointer}\n"
	      ".rxf-anc{opacity:0.55}\n"
	      ".rxf-h{font:17px Verdana,sans-serif;fill:#000}\n"
	      ".rxf-s{font:12px Verdana,sans-serif;fill:#555}\n"
	      ".rxf-reset,.rxf-search{font:12px Verdana,sans-serif;fill:#036;cursor:pointer}\n"
	      ".rxf-det,.rxf-mat{font:12px Verdana,sans-serif;fill:#000}\n"
	      "</style>\n", o);
	fprintf(o, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"rgb(248,248,242)\"/>\n", width,
		height);
	fprintf(o, "<text class=\"rxf-h\" x=\"%d\" y=\"24\" text-anchor=\"middle\">", width / 2);
	rxa_xml_puts(o, title);
	fputs("</text>\n", o);
	if (opt->subtitle || diff) {
		fprintf(o, "<text class=\"rxf-s\" x=\"%d\" y=\"44\" text-anchor=\"middle\">", width / 2);
		if (opt->subtitle)
			rxa_xml_puts(o, opt->subtitle);
		if (diff) {
			char av[32], bv[32];
			fmt_val(av, sizeof(av), a->nodes[0].total);
			fmt_val(bv, sizeof(bv), total);
			fprintf(o, "%s", opt->subtitle ? "  |  " : "");
			rxa_xml_puts(o, opt->label_a ? opt->label_a : "A");
			fprintf(o, " %s -&gt; ", av);
			rxa_xml_puts(o, opt->label_b ? opt->label_b : "B");
			fprintf(o, " %s ", bv);
			rxa_xml_puts(o, units);
			fputs("; widths = B, red grows, blue shrinks", o);
		}
		fputs("</text>\n", o);
	}
	fprintf(o, "<text class=\"rxf-reset\" x=\"%d\" y=\"24\">Reset Zoom</text>\n", FLAME_PAD);
	fprintf(o, "<text class=\"rxf-search\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n",
		width - FLAME_PAD);
	fprintf(o, "<text class=\"rxf-det\" x=\"%d\" y=\"%d\"> </text>\n", FLAME_PAD, height - 14);
	fprintf(o, "<text class=\"rxf-mat\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n",
		width - FLAME_PAD, height - 14);
	for (size_t i = 0; i < l.n; i++)
		svg_frame(o, f, &l.r[i], total, scale, height, units, diff);
	fputs("<script type=\"text/javascript\"><![CDATA[\n", o);
	fputs(flame_js, o);
	fputs("]]></script>\n</svg>\n", o);
	if (fflush(o) || ferror(o))
		rc = -EIO;
out:
	free(l.r);
	return rc;
}

int rxa_flame_svg_write(const struct rxa_flame *f, FILE *out, const struct rxa_flame_svg_opts *o)
{
	return svg_write(f, NULL, out, o);
}

int rxa_flame_diff_svg_write(const struct rxa_flame *a, const struct rxa_flame *b, FILE *out,
			     const struct rxa_flame_svg_opts *o)
{
	if (!a)
		return -EINVAL;
	return svg_write(b, a, out, o);
}

int rxa_flame_svg_write_file(const struct rxa_flame *f, const char *path,
			     const struct rxa_flame_svg_opts *o)
{
	struct rxr_afile af;
	int rc = rxr_afile_open(&af, path);
	if (rc)
		return rc;
	rc = rxa_flame_svg_write(f, af.f, o);
	if (rc) {
		rxr_afile_abort(&af);
		return rc;
	}
	return rxr_afile_commit(&af);
}
