/*
 * view.js - draws the page of `memtrace view` from #memtrace-data (see
 * analyze/views/html.c for what it holds). It computes no figure of its
 * own: every number shown is the report's or the model's; this file only
 * lays them out, formats them and draws them (the timeline is thinned to a
 * min/max envelope per pixel column, which keeps every peak visible).
 *
 * Libraries: uPlot 1.6.32 (MIT, analyze/views/html/LICENSE.uPlot) draws
 * the timelines: one file of 50 KB, fast with series of millions of points,
 * zoom and hover built in. The icicle is written here (positioned DOM
 * boxes, about 80 lines): the flame-graph libraries of npm either need d3
 * (d3-flame-graph: d3 is ~270 KB more) or are applications (speedscope),
 * and a DOM icicle keeps every label as text, selectable and accessible.
 * The address map is a canvas: up to 20,000 boxes; the arrow keys step
 * through them. Active memory (PyTorch's memory_viz view) stacks the same
 * boxes over time on a canvas. A device used by several processes gets a
 * menu: their sum, their own rows stacked, or one of them.
 *
 * Strings from a trace are only ever set with textContent, never as HTML.
 * #memtrace-check (hidden) receives the figures shown and any script error,
 * for the tests (tests/t260-view-*.sh) to read from the DOM.
 */
(function () {
'use strict';

var errors = [];
var checks = [];
var checkEl = document.getElementById('memtrace-check');

function writeCheck() {
	var lines = ['errors ' + errors.length];
	errors.forEach(function (e) { lines.push('error ' + e); });
	checkEl.textContent = lines.concat(checks).join('\n') + '\n';
}
window.onerror = function (msg, src, line) {
	errors.push(String(msg).replace(/\n/g, ' ') + ' (line ' + line + ')');
	writeCheck();
};
window.addEventListener('unhandledrejection', function (e) {
	errors.push('unhandled rejection: ' + String(e.reason));
	writeCheck();
});

/* Okabe-Ito, with the text colour each needs. */
var PALETTE = [['#E69F00', '#000'], ['#56B4E9', '#000'], ['#009E73', '#fff'], ['#F0E442', '#000'],
	['#0072B2', '#fff'], ['#D55E00', '#fff'], ['#CC79A7', '#000']];
/* axis steps in binary units: 1, 2, 5, 10, 20, 50, 100, 200, 500 KiB... */
var BYTE_INCRS = [];
[1, 1024, 1048576, 1073741824, 1099511627776].forEach(function (u) {
	[1, 2, 5, 10, 20, 50, 100, 200, 500].forEach(function (m) { BYTE_INCRS.push(u * m); });
});
var C = { reserved: '#0072B2', allocated: '#E69F00', cached: '#56B4E9', used: '#000000', requested: '#009E73',
	peak: '#CC79A7', failure: '#D55E00', other: '#BBBBBB' };

var D = JSON.parse(document.getElementById('memtrace-data').textContent);
var R = D.report;
var siteById = {};
D.sites.forEach(function (s) { siteById[s.site] = s; });
/* the framework (PyTorch's allocator): its devices of the run, in the
   order of R.framework.devices; its tensor sites by id */
var FW = D.framework || null, RF = R.framework || null;
var fwSiteById = {}, rfSiteById = {};
if (FW) FW.sites.forEach(function (s) { fwSiteById[s.site] = s; });
if (RF) RF.sites.forEach(function (s) { rfSiteById[s.site] = s; });
/* the program's units of time: the report's ranges and steps, and what
   html.c adds for the page (D.units: per step its growth, per test its
   leak, the outer ranges to draw), or null */
var RR = R.ranges || null, U = D.units || null;
/* the framework's device on the report's device i, or null */
function fwDev(i) {
	var k = D.devices[i] ? D.devices[i].framework : -1;
	return FW && k >= 0 ? { k: k, fd: FW.devices[k], rd: RF.devices[k] } : null;
}
/* a site's name: the one the report gives it (html.c writes it) */
function siteName(id) {
	var s = siteById[id];
	return s ? s.name + folds(s.folded, 'library') : '(site ' + id + ')';
}
function fwSiteName(id) {
	var s = fwSiteById[id];
	return s ? s.name + folds(s.folded, 'framework') : '(tensor site ' + id + ')';
}
function stackName(n) { return n ? n.name + folds(n.folded, 'library') : '(no stack recorded)'; }

/* --- helpers ------------------------------------------------------------ */

function el(tag, attrs, text) {
	var e = document.createElement(tag);
	if (attrs)
		Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
	if (text !== undefined && text !== null)
		e.textContent = String(text);
	return e;
}
function $(id) { return document.getElementById(id); }

/* n to d decimals as C's printf rounds (ties to even: the report's own
   rounding), so that a size reads the same here as in the text report */
function fixed(v, d) {
	var m = Math.pow(10, d), x = v * m, f = Math.floor(x);
	if (x - f === 0.5 && f % 2 === 0) return (f / m).toFixed(d);
	return v.toFixed(d);
}
/* Sizes as the text report writes them (rep_size): binary units, three
   figures. */
// The tip of a map: what at(e) finds under the pointer, described, beside it.
function hoverTip(cv, tip, at, describe) {
	cv.addEventListener('mousemove', function (e) {
		var b = at(e);
		if (!b) { tip.hidden = true; return; }
		tip.textContent = describe(b);
		tip.style.left = (e.clientX + 12) + 'px';
		tip.style.top = (e.clientY + 12) + 'px';
		tip.hidden = false;
	});
	cv.addEventListener('mouseleave', function () { tip.hidden = true; });
}

function fmtBytes(b) {
	if (b === null || b === undefined)
		return '';
	if (b < 0) return '-' + fmtBytes(-b);
	if (b < 1024) return b + ' B';
	var u = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'], i = -1, v = b;
	while (v >= 1024 && i < 5) { v /= 1024; i++; }
	return fixed(v, v < 10 ? 2 : v < 100 ? 1 : 0) + ' ' + u[i];
}
/* Durations as the text report writes them (rep_duration). */
function fmtNs(ns) {
	if (ns === null || ns === undefined)
		return '';
	if (ns < 1e6) return fixed(ns / 1e3, 1) + ' us';
	if (ns < 1e9) return fixed(ns / 1e6, 1) + ' ms';
	return fixed(ns / 1e9, 3) + ' s';
}
/* A time of the run as the text report writes it (rep_time): "+3.4 ms". */
function fmtAt(ns) { return ns === null || ns === undefined ? '' : '+' + fmtNs(ns); }
/* A figure of the data shown: its source (a path in #memtrace-data) and
   value go with it, so a test can tell that the page computed none. */
function fig(v, src, fmt) {
	var e = el('span', { class: 'fig', 'data-src': src, 'data-v': String(v) }, (fmt || fmtBytes)(v));
	return e;
}
/* "  (+6 library frames inside)", as the text report says a name's folds */
function folds(n, kind) { return n > 0 ? '  (+' + n + ' ' + kind + ' frame' + (n === 1 ? '' : 's') + ' inside)' : ''; }
/* axis labels: as short as they can be, "1.5 ms", "200 us" */
function fmtAxisSec(s) {
	var ns = s * 1e9, a = Math.abs(ns);
	if (a < 1e3) return +ns.toFixed(1) + ' ns';
	if (a < 1e6) return +(ns / 1e3).toFixed(2) + ' us';
	if (a < 1e9) return +(ns / 1e6).toFixed(2) + ' ms';
	return +(ns / 1e9).toFixed(3) + ' s';
}
function fmtSec(s) { return s === null || s === undefined ? '' : fmtNs(Math.round(s * 1e9)); }
function basename(p) { return p ? String(p).replace(/^.*\//, '') : p; }
function frameText(f) {
	if (f.python && !f.module)
		return basename(f.file) + ':' + f.line + ' ' + f.function;
	if (f.function)
		return f.function + ' (' + (f.file ? basename(f.file) : '?') + ':' + f.line + ')';
	return basename(f.module) + '+' + f.offset;
}
function frameFull(f) {
	if (f.python && !f.module)
		return (f.file || '?') + ':' + f.line + '  ' + f.function + '  [python]';
	if (f.function)
		return f.function + '  ' + (f.file || '?') + ':' + f.line + (f.python ? '  [python]' : '');
	return f.module + '+' + f.offset;
}
function where(frames) { return frames && frames.length ? frameText(frames[0]) : '(no stack)'; }
function devName(dv) { return (R.devices.length > 1 && dv.hostname && hosts() > 1 ? dv.hostname + ' ' : '') + 'device ' + dv.device; }
var nhosts = null;
function hosts() {
	if (nhosts === null) {
		var h = {};
		R.devices.forEach(function (d) { h[d.hostname] = 1; });
		nhosts = Object.keys(h).length;
	}
	return nhosts;
}
function hostOfPid(pid) {
	for (var i = 0; i < R.processes.length; i++)
		if (R.processes[i].pid === pid)
			return R.processes[i].hostname;
	return null;
}
/* The failures the report lists on device index i of R.devices. */
function failuresOf(i) {
	var dv = R.devices[i];
	return (R.failures || []).filter(function (f) {
		return f.device === dv.device && (hosts() === 1 || hostOfPid(f.pid) === dv.hostname);
	});
}

/* --- the details panel -------------------------------------------------- */

function showDetails(title, parts) {
	$('details-title').textContent = title;
	var b = $('details-body');
	b.textContent = '';
	parts.forEach(function (p) {
		if (p.text !== undefined)
			b.appendChild(el('p', null, p.text));
		if (p.frames) {
			if (p.label)
				b.appendChild(el('h4', null, p.label));
			var ol = el('ol');
			if (!p.frames.length)
				ol.appendChild(el('li', null, '(no stack recorded)'));
			p.frames.forEach(function (f) { ol.appendChild(el('li', null, frameFull(f))); });
			b.appendChild(ol);
			if (p.hidden)
				b.appendChild(el('p', { class: 'hint' }, p.hidden + ' frames of the allocator hidden'));
		}
	});
	$('details').hidden = false;
}
$('details-close').addEventListener('click', function () { $('details').hidden = true; });
document.addEventListener('keydown', function (e) { if (e.key === 'Escape') $('details').hidden = true; });

/* --- tables ------------------------------------------------------------- */

/* cols: {label, get(row), fmt(v), num, src(row): the path in
   #memtrace-data of the figure get() returns}; rows selectable when
   onSelect. */
function table(parent, cols, rows, onSelect, sortable) {
	var t = el('table'), thead = el('thead'), tr = el('tr'), tbody = el('tbody');
	var order = rows.slice(), sortCol = -1, desc = true;
	cols.forEach(function (c, ci) {
		var th = el('th', { scope: 'col', class: c.num ? 'num' : '' });
		if (sortable) {
			var b = el('button', { type: 'button' }, c.label);
			b.addEventListener('click', function () {
				desc = sortCol === ci ? !desc : !!c.num;
				sortCol = ci;
				order.sort(function (x, y) {
					var a = c.get(x), z = c.get(y);
					var r = a < z ? -1 : a > z ? 1 : 0;
					return desc ? -r : r;
				});
				Array.prototype.forEach.call(tr.children, function (h) { h.removeAttribute('aria-sort'); });
				th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
				fill();
			});
			th.appendChild(b);
		} else {
			th.textContent = c.label;
		}
		tr.appendChild(th);
	});
	thead.appendChild(tr);
	t.appendChild(thead);
	t.appendChild(tbody);
	function fill() {
		tbody.textContent = '';
		order.forEach(function (r) {
			var row = el('tr');
			cols.forEach(function (c) {
				var v = c.get(r), td = el('td', { class: c.num ? 'num' : (c.where ? 'where' : '') },
					c.fmt ? c.fmt(v, r) : v), src = c.src ? c.src(r) : null;
				/* a figure of the data: where it comes from (tests) */
				if (src !== null && src !== undefined) {
					td.classList.add('fig');
					td.setAttribute('data-src', src);
					td.setAttribute('data-v', String(v));
				}
				row.appendChild(td);
			});
			if (onSelect) {
				row.setAttribute('tabindex', '0');
				row.addEventListener('click', function () { onSelect(r); });
				row.addEventListener('keydown', function (e) {
					if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); onSelect(r); }
				});
			}
			tbody.appendChild(row);
		});
	}
	fill();
	parent.appendChild(t);
	return rows.length;
}

/* --- timelines ---------------------------------------------------------- */

/* The rows t[lo..hi) thinned to at most 2 per pixel column: per column the
   first row, then the rows holding the column's highest and lowest reserved
   and allocated, in time order. A row holds until the next one. */
function thin(t, cols, lo, hi, px) {
	var n = hi - lo, out = [[]].concat(cols.map(function () { return []; }));
	if (n <= px * 4) {
		for (var i = lo; i < hi; i++) {
			out[0].push(t[i] / 1e9);
			for (var k = 0; k < cols.length; k++) out[k + 1].push(cols[k][i]);
		}
		return out;
	}
	var t0 = t[lo], span = (t[hi - 1] - t0) || 1, i2 = lo;
	for (var c = 0; c < px && i2 < hi; c++) {
		var end = t0 + span * (c + 1) / px, pick = [i2];
		var mx = [], mn = [];
		for (k = 0; k < cols.length; k++) { mx[k] = i2; mn[k] = i2; }
		var j = i2;
		for (; j < hi && (t[j] <= end || c === px - 1); j++)
			for (k = 0; k < cols.length; k++) {
				if (cols[k][j] > cols[k][mx[k]]) mx[k] = j;
				if (cols[k][j] < cols[k][mn[k]]) mn[k] = j;
			}
		if (j === i2) j = i2 + 1;
		pick = pick.concat(mx, mn, [j - 1]);
		pick.sort(function (a, b) { return a - b; });
		for (var q = 0; q < pick.length; q++) {
			if (q && pick[q] === pick[q - 1]) continue;
			out[0].push(t[pick[q]] / 1e9);
			for (k = 0; k < cols.length; k++) out[k + 1].push(cols[k][pick[q]]);
		}
		i2 = j;
	}
	return out;
}

function lowerBound(a, v) {
	var lo = 0, hi = a.length;
	while (lo < hi) { var m = (lo + hi) >> 1; if (a[m] < v) lo = m + 1; else hi = m; }
	return lo;
}

var flameAt = null;     /* set by the flame graph: show live memory at a time */

/* A process's reserved bytes at time t from its own rows: 0 before its
   first row, after_end from its last row (its end) on. */
function procAt(p, t) {
	var rt = p.timeline.t, k = lowerBound(rt, t + 0.5) - 1;
	if (k < 0) return 0;
	return k === rt.length - 1 ? p.after_end : p.timeline.reserved[k];
}

/* The processes of a device stacked: at every row time of any of them and
   of the device, the running sums of their reserved bytes, first process
   at the bottom. cols[k] = processes 0..k. */
function stackRows(tl, procs) {
	var seen = {}, x = [];
	[tl.t].concat(procs.map(function (p) { return p.timeline.t; })).forEach(function (a) {
		a.forEach(function (v) { if (!seen[v]) { seen[v] = 1; x.push(v); } });
	});
	x.sort(function (a, b) { return a - b; });
	var cols = procs.map(function () { return []; });
	x.forEach(function (v) {
		var sum = 0;
		procs.forEach(function (p, k) { sum += procAt(p, v); cols[k].push(sum); });
	});
	return { t: x, cols: cols };
}

/* The timeline of a device; with opts.procs (2 or more processes on it) a
   control shows the device's sum, the processes stacked, or one process. */
function timeline(parent, title, tl, samples, marks, opts) {
	var width = Math.max(400, Math.min(parent.clientWidth || 900, 1400) - 10);
	if (title) parent.appendChild(el('h3', null, title));
	title = title || opts.label || '';
	var procs = opts.procs || [], holder = { u: null, mode: 'sum' };
	var box = el('div');
	if (procs.length > 1) {
		var ctl = el('div', { class: 'controls' }), lab = el('label', null, 'Processes: ');
		var sel = el('select', { 'aria-label': 'processes on ' + title });
		sel.appendChild(el('option', { value: 'sum' }, 'the device (their sum)'));
		sel.appendChild(el('option', { value: 'stack' }, 'stacked, one area per process'));
		procs.forEach(function (p, k) { sel.appendChild(el('option', { value: String(k) }, 'only ' + p.label)); });
		lab.appendChild(sel);
		ctl.appendChild(lab);
		parent.appendChild(ctl);
		sel.addEventListener('change', function () {
			var lo = holder.u ? holder.u.scales.x.min : null, hi = holder.u ? holder.u.scales.x.max : null;
			if (holder.u) holder.u.destroy();
			box.textContent = '';
			holder.mode = sel.value;
			holder.u = sel.value === 'sum' ? chart(box, width, tl, samples, marks, opts) :
				sel.value === 'stack' ? chart(box, width, null, null, marks, Object.assign({ stack: procs, tl: tl }, opts)) :
				chart(box, width, procs[+sel.value].timeline, null, marks, opts);
			if (holder.u && lo !== null) holder.u.view(lo, hi);
			if (opts.onChange) opts.onChange(holder.u);
		});
		holder.select = sel;
	}
	parent.appendChild(box);
	holder.u = chart(box, width, tl, samples, marks, opts);
	return holder;
}

/* The series of a chart: the CUDA level's, or the framework's (PyTorch's
   own terms) with opts.cols. Each a column of the timeline's rows. */
var CUDA_COLS = [{ key: 'reserved', label: 'reserved', color: C.reserved, width: 2 },
	{ key: 'allocated', label: 'allocated', color: C.allocated, width: 1.5 },
	{ key: 'cached', label: 'cached', color: C.cached, width: 1, dash: [4, 3] }];

/* Labels of the marks, each in the first row where it overlaps no other
   (to the left of its line when it would run off the chart); placed
   boxes are kept on the chart for the tests (u.labelBoxes). */
function placeLabels(ctx, marks, xs, left, right, rowH) {
	var rows = [], out = [];
	marks.forEach(function (m, k) {
		if (!m.label || xs[k] === null) return;
		var w = ctx.measureText(m.label).width, pad = 4 * devicePixelRatio;
		var x0 = xs[k] + pad;
		if (x0 + w > right) x0 = xs[k] - pad - w;
		if (x0 < left) x0 = left;
		for (var r = 0; r < 12; r++) {
			var taken = (rows[r] || []).some(function (b) { return x0 < b[1] + pad && x0 + w + pad > b[0]; });
			if (!taken) break;
		}
		(rows[r] = rows[r] || []).push([x0, x0 + w]);
		out.push({ mark: m, x: x0, w: w, row: r, y: rowH * (r + 1) });
	});
	return out;
}

/* The steps as bands behind a chart's curves (alternating shades, each
   labelled with its number where it is wide enough) and the outer ranges
   (a lane per range, up to UNIT_LANES) in a strip along its bottom; of
   the processes pids only (null: all). Counts what it drew into u.units
   for the tests. */
var UNIT_LANES = 4;
var unitLane = {};
if (U) U.ranges.forEach(function (x) {
	if (!(x[2] in unitLane)) unitLane[x[2]] = Math.min(Object.keys(unitLane).length, UNIT_LANES - 1);
});
function drawUnits(u, pids) {
	if (!RR) return;
	var ctx = u.ctx, dpr = devicePixelRatio, top = u.bbox.top, h = u.bbox.height;
	var left = u.bbox.left, right = left + u.bbox.width, lh = 13 * dpr, nl = 0, n = { bands: 0, ranges: 0 };
	function mine(pid) { return !pids || pids.indexOf(pid) >= 0; }
	function span(a, b) {
		var x0 = Math.max(left, u.valToPos(a / 1e9, 'x', true)), x1 = Math.min(right, u.valToPos(b / 1e9, 'x', true));
		return x1 < left || x0 > right ? null : [x0, Math.max(x1, x0 + 1)];
	}
	Object.keys(unitLane).forEach(function (k) { nl = Math.max(nl, unitLane[k] + 1); });
	ctx.save();
	ctx.font = (11 * dpr) + 'px sans-serif';
	ctx.textAlign = 'left';
	ctx.textBaseline = 'bottom';
	RR.steps.forEach(function (st, k) {
		var x = mine(st.pid) && span(st.start_ns, st.end_ns);
		if (!x) return;
		n.bands++;
		ctx.fillStyle = k % 2 ? 'rgba(0,114,178,0.13)' : 'rgba(0,114,178,0.05)';
		ctx.fillRect(x[0], top, x[1] - x[0], h);
		var lab = 'step ' + st.step;
		if (ctx.measureText(lab).width + 6 * dpr < x[1] - x[0]) {
			ctx.fillStyle = '#33546b';
			ctx.fillText(lab, x[0] + 3 * dpr, top + h - nl * lh - 2 * dpr);
		}
	});
	(U ? U.ranges : []).forEach(function (r) {
		var x = mine(r[3]) && span(r[0], r[1]);
		if (!x) return;
		var lane = unitLane[r[2]], y = top + h - (nl - lane) * lh, c = PALETTE[(lane + 2) % PALETTE.length];
		n.ranges++;
		ctx.globalAlpha = 0.75;
		ctx.fillStyle = c[0];
		ctx.fillRect(x[0], y, x[1] - x[0], lh - dpr);
		ctx.globalAlpha = 1;
		if (ctx.measureText(r[4]).width + 4 * dpr < x[1] - x[0]) {
			ctx.fillStyle = c[1];
			ctx.fillText(r[4], x[0] + 2 * dpr, y + lh - 2 * dpr);
		}
	});
	ctx.restore();
	u.units = n;
}

function chart(box, width, tl, samples, marks, opts) {
	var stack = opts.stack ? stackRows(opts.tl, opts.stack) : null;
	var cols = opts.cols || CUDA_COLS;
	if (stack) {
		tl = { t: stack.t, reserved: stack.cols[stack.cols.length - 1], allocated: stack.cols[0] };
		cols = CUDA_COLS.slice(0, 2);
	}
	var t = tl.t, ncol = cols.length, data = cols.map(function (c) { return tl[c.key]; });
	var res = tl.reserved;
	var end = opts.duration / 1e9;
	if (!t.length) {
		box.appendChild(el('p', { class: 'hint' }, 'nothing allocated on this device'));
		return null;
	}
	var hasSamples = !!(samples && samples.t.length);
	/* The device's used memory (the CUDA context, other processes) often
	   dwarfs what the program holds; on one axis it would flatten the
	   program's curves, and a second axis would make its points look
	   above or below the peak only because of the scales (the plots draw
	   it in a panel of its own for that reason). So it starts hidden when
	   it is over 4 times the program's peak, and its legend entry says so:
	   a click on it shows the samples. */
	var maxRes = res.reduce(function (m, v) { return v > m ? v : m; }, 0);
	var maxUsed = hasSamples ? samples.used.reduce(function (m, v) { return v > m ? v : m; }, 0) : 0;
	var usedHidden = hasSamples && maxUsed > 4 * maxRes;
	var usedLabel = usedHidden ? 'device used (sample; ' + fmtBytes(maxUsed) + ' at most: hidden, click to show)' :
		'device used (sample)';
	function dataFor(lo, hi) {
		if (stack) {
			/* top area first: each area is filled down to 0 and the next
			   one, lower, is drawn over it */
			var a0 = Math.max(0, lowerBound(t, lo * 1e9) - 1), b0 = Math.min(t.length, lowerBound(t, hi * 1e9) + 1);
			var sd = thin(t, stack.cols.slice().reverse(), a0, b0, width);
			if (b0 === t.length && end > sd[0][sd[0].length - 1]) {
				sd[0].push(end);
				for (var q = 1; q < sd.length; q++) sd[q].push(sd[q][sd[q].length - 1]);
			}
			return sd;
		}
		var a = Math.max(0, lowerBound(t, lo * 1e9) - 1), b = Math.min(t.length, lowerBound(t, hi * 1e9) + 1);
		var d = thin(t, data, a, b, width);
		/* the last row holds to the end of the run */
		if (b === t.length && end > d[0][d[0].length - 1]) {
			d[0].push(end);
			for (var k = 1; k <= ncol; k++) d[k].push(d[k][d[k].length - 1]);
		}
		if (!hasSamples)
			return d;
		/* merge the samples in: a point each, the timeline held there */
		var x = [], s = cols.map(function () { return []; }), used = [], p = 0;
		var st = samples.t.map(function (v) { return v / 1e9; });
		for (var i = 0; i <= d[0].length; i++) {
			while (p < st.length && (i === d[0].length || st[p] < d[0][i])) {
				if (st[p] >= lo && st[p] <= hi && i > 0) {
					x.push(st[p]);
					for (var k2 = 0; k2 < ncol; k2++) s[k2].push(d[k2 + 1][i - 1]);
					used.push(samples.used[p]);
				}
				p++;
			}
			if (i === d[0].length) break;
			x.push(d[0][i]);
			for (k2 = 0; k2 < ncol; k2++) s[k2].push(d[k2 + 1][i]);
			used.push(null);
		}
		return [x].concat(s, [used]);
	}
	var stepped = uPlot.paths.stepped({ align: 1 });
	var bytesVal = function (u, v) { return v === null || v === undefined ? '-' : fmtBytes(v); };
	var series = [{ label: 'time', value: function (u, v) { return fmtSec(v); } }];
	cols.forEach(function (c) {
		series.push({ label: c.label, stroke: c.color, width: c.width, dash: c.dash, paths: stepped, value: bytesVal,
			points: { show: false } });
	});
	if (hasSamples)
		series.push({ label: usedLabel, show: !usedHidden, stroke: C.used, width: 0, paths: function () { return null; },
			points: { show: true, size: 6, fill: C.used }, value: bytesVal });
	if (stack) {
		var nst = opts.stack.length;
		series = [series[0]];
		for (var k = nst - 1; k >= 0; k--)
			(function (k) {
				var c = PALETTE[k % PALETTE.length][0];
				series.push({ label: opts.stack[k].label, stroke: c, fill: c, width: 1, paths: stepped, points: { show: false },
					/* the process's own bytes: its sum less the one below */
					value: function (u, v, si, idx) {
						if (v === null || v === undefined || idx === null) return '-';
						return fmtBytes(v - (si < nst ? u.data[si + 1][idx] : 0));
					} });
			})(k);
	}
	var u;
	function draw(u) {
		var ctx = u.ctx, xs = [], left = u.bbox.left, right = u.bbox.left + u.bbox.width;
		ctx.save();
		ctx.font = (12 * devicePixelRatio) + 'px sans-serif';
		ctx.textAlign = 'left';
		ctx.textBaseline = 'alphabetic';
		marks.forEach(function (m) {
			var x = u.valToPos(m.t / 1e9, 'x', true);
			if (x < left - 0.5 || x > right + 0.5) { xs.push(null); return; }
			xs.push(x);
			ctx.strokeStyle = m.color;
			ctx.lineWidth = 1.5 * devicePixelRatio;
			ctx.setLineDash(m.dash ? [6 * devicePixelRatio, 4 * devicePixelRatio] : []);
			ctx.beginPath();
			ctx.moveTo(x, u.bbox.top);
			ctx.lineTo(x, u.bbox.top + u.bbox.height);
			ctx.stroke();
		});
		var placed = placeLabels(ctx, marks, xs, left, right, 14 * devicePixelRatio);
		placed.forEach(function (p) {
			ctx.fillStyle = 'rgba(255,255,255,0.85)';
			ctx.fillRect(p.x - 1, u.bbox.top + p.y - 11 * devicePixelRatio, p.w + 2, 13 * devicePixelRatio);
			ctx.fillStyle = p.mark.color;
			ctx.fillText(p.mark.label, p.x, u.bbox.top + p.y);
		});
		u.labelBoxes = placed;
		ctx.restore();
	}
	function view(lo, hi) {
		u.setData(dataFor(lo, hi), false);
		u.setScale('x', { min: lo, max: hi });
	}
	u = new uPlot({
		width: width, height: 280,
		scales: { x: { time: false } },
		series: series,
		axes: [{ space: 70, values: function (u, vs) { return vs.map(fmtAxisSec); } },
			{ size: 70, incrs: BYTE_INCRS, values: function (u, vs) { return vs.map(fmtBytes); } }],
		cursor: { drag: { x: true, y: false, setScale: false }, bind: { dblclick: function () { return null; } } },
		hooks: {
			drawClear: [function (u) { drawUnits(u, opts.pids || null); }],
			draw: [draw],
			setSelect: [function (u) {
				if (u.select.width < 3) return;
				var lo = u.posToVal(u.select.left, 'x'), hi = u.posToVal(u.select.left + u.select.width, 'x');
				u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
				view(lo, hi);
			}]
		}
	}, dataFor(0, end), box);
	u.setScale('x', { min: 0, max: end || 1e-9 });
	u.over.addEventListener('dblclick', function () { view(0, end); });
	u.over.addEventListener('wheel', function (e) {
		e.preventDefault();
		var lo = u.scales.x.min, hi = u.scales.x.max, span = hi - lo;
		var at = u.posToVal(e.offsetX, 'x');
		if (e.shiftKey) {
			var dx = span * 0.1 * (e.deltaY > 0 ? 1 : -1);
			lo += dx; hi += dx;
		} else {
			var f = e.deltaY > 0 ? 1.25 : 0.8;
			lo = at - (at - lo) * f; hi = at + (hi - at) * f;
		}
		view(Math.max(0, lo), Math.min(end, hi));
	}, { passive: false });
	u.over.addEventListener('click', function (e) {
		if (flameAt && opts.dev !== undefined) flameAt(opts.dev, u.posToVal(e.offsetX, 'x') * 1e9);
	});
	u.view = view;
	return u;
}

/* How many placed labels of a chart overlap another (tests: 0). */
function overlaps(u) {
	var n = 0, b = (u && u.labelBoxes) || [];
	for (var i = 0; i < b.length; i++)
		for (var j = i + 1; j < b.length; j++)
			if (b[i].row === b[j].row && b[i].x < b[j].x + b[j].w && b[j].x < b[i].x + b[i].w) n++;
	return n;
}

var timelineMax = [], plots = [], tlControls = [], labelChecks = [];

/* A line of text and figures: parts are strings, or [value, src, fmt]
   (fig: the figure, its path in #memtrace-data). */
function figLine(parent, parts, cls) {
	var p = el('p', cls ? { class: cls } : null);
	parts.forEach(function (x) {
		if (typeof x === 'string') p.appendChild(document.createTextNode(x));
		else if (x) p.appendChild(fig(x[0], x[1], x[2]));
	});
	parent.appendChild(p);
	return p;
}
/* PyTorch's state at a moment, as the text report writes it: "reserved R
   = allocated A + cached C (requested Q; inactive split I, largest free
   block L)"; st: a state of report.framework at path src. */
function fwState(st, src) {
	var parts = ['reserved ', [st.reserved_bytes, src + '.reserved_bytes'], ' = allocated ',
		[st.allocated_bytes, src + '.allocated_bytes'], ' + cached ', [st.cached_bytes, src + '.cached_bytes'],
		' (requested ', [st.requested_bytes, src + '.requested_bytes'], '; inactive split ',
		[st.inactive_split_bytes, src + '.inactive_split_bytes'], ', largest free block ',
		[st.largest_free_block_bytes, src + '.largest_free_block_bytes']];
	if (st.awaiting_free_bytes)
		parts.push('; ', [st.awaiting_free_bytes, src + '.awaiting_free_bytes'], ' of cached awaiting other streams');
	parts.push(')');
	return parts;
}
/* "device used U of T (sampled 1.2 ms before the peak), of which X
   untraced (...)", as the text report says it */
function usedParts(i, dv) {
	var src = 'report.devices.' + i, parts = [];
	if (dv.device_used_bytes_at_peak === null || dv.device_used_bytes_at_peak === undefined) return parts;
	parts.push('device used ', [dv.device_used_bytes_at_peak, src + '.device_used_bytes_at_peak']);
	if (dv.device_total_bytes) parts.push(' of ', [dv.device_total_bytes, src + '.device_total_bytes']);
	if (D.devices[i].sample_when) parts.push(' (', [D.devices[i].sample_when, 'devices.' + i + '.sample_when', String], ')');
	if (dv.untraced_bytes_at_peak >= 0)
		parts.push(', of which ', [dv.untraced_bytes_at_peak, src + '.untraced_bytes_at_peak'],
			' untraced (CUDA context, kernels, libraries, ' + (R.processes.length > 1 ? 'untraced processes' : 'untraced processes') + ')');
	else if (dv.untraced_bytes_at_peak !== null && dv.untraced_bytes_at_peak !== undefined)
		parts.push(' (taken before ', [-dv.untraced_bytes_at_peak, src + '.untraced_bytes_at_peak', function (v) { return fmtBytes(v); }],
			' of the peak was reserved)');
	return parts;
}
/* the framework's out-of-memory errors on the report's device i */
function fwOomsOf(i) {
	var f = fwDev(i);
	return f ? f.fd.ooms.map(function (k) { return { k: k, o: RF.ooms[k] }; }) : [];
}
function oomMarks(i) {
	return fwOomsOf(i).map(function (x) {
		return { t: x.o.state.time_ns, color: C.failure, label: 'OOM ' + fmtBytes(x.o.requested_bytes) + ': ' + x.o.verdict };
	});
}

function timelines() {
	var parent = $('tl');
	D.devices.forEach(function (dd, i) {
		var dv = R.devices[i], f = fwDev(i);
		var marks = [];
		if (f) {
			/* PyTorch's terms first: allocated = the tensors' blocks */
			var rd = f.rd, src = 'report.framework.devices.' + f.k;
			parent.appendChild(el('h3', null, dd.title + ': PyTorch\'s allocator'));
			figLine(parent, ['peak allocated ', [rd.peak_allocated.allocated_bytes, src + '.peak_allocated.allocated_bytes'], ' at ',
				[rd.peak_allocated.time_ns, src + '.peak_allocated.time_ns', fmtAt], ': '].concat(fwState(rd.peak_allocated, src + '.peak_allocated')), 'figs');
			figLine(parent, ['peak requested ', [rd.peak_requested.requested_bytes, src + '.peak_requested.requested_bytes'], ' at ',
				[rd.peak_requested.time_ns, src + '.peak_requested.time_ns', fmtAt], '; peak reserved ',
				[rd.peak_reserved.reserved_bytes, src + '.peak_reserved.reserved_bytes'], ' at ',
				[rd.peak_reserved.time_ns, src + '.peak_reserved.time_ns', fmtAt], ': '].concat(fwState(rd.peak_reserved, src + '.peak_reserved')), 'figs');
			figLine(parent, ['at exit: '].concat(fwState(rd.at_exit, src + '.at_exit')), 'figs');
			var cuda = ['CUDA API: peak reserved ', [dv.peak_reserved_bytes, 'report.devices.' + i + '.peak_reserved_bytes'], ' at ',
				[dv.peak_reserved_time_ns, 'report.devices.' + i + '.peak_reserved_time_ns', fmtAt]];
			if (rd.cuda_reserved_at_peak_reserved_bytes !== null)
				cuda.push('; at the framework\'s peak of reserved ', [rd.cuda_reserved_at_peak_reserved_bytes, src + '.cuda_reserved_at_peak_reserved_bytes'],
					', of which ', [rd.outside_framework_bytes_at_peak_reserved, src + '.outside_framework_bytes_at_peak_reserved'],
					' outside the framework\'s segments');
			var used = usedParts(i, dv);
			if (used.length) cuda = cuda.concat(['; '], used);
			figLine(parent, cuda, 'figs beside');
			var fm = [{ t: rd.peak_allocated.time_ns, color: C.allocated, dash: true, label: 'peak allocated ' + fmtBytes(rd.peak_allocated.allocated_bytes) },
				{ t: rd.peak_reserved.time_ns, color: C.reserved, dash: true, label: 'peak reserved ' + fmtBytes(rd.peak_reserved.reserved_bytes) }]
				.concat(oomMarks(i));
			var fh = timeline(parent, null, f.fd.timeline, null, fm,
				{ duration: R.duration_ns, dev: i, cols: [
					{ key: 'allocated', label: 'allocated (tensor blocks)', color: C.allocated, width: 2 },
					{ key: 'requested', label: 'requested', color: C.requested, width: 1, dash: [2, 2] },
					{ key: 'cached', label: 'cached (free blocks)', color: C.cached, width: 1, dash: [4, 3] },
					{ key: 'reserved', label: 'reserved (segments)', color: C.reserved, width: 1.5 }] });
			labelChecks.push(['fw ' + f.k, fh.u]);
			var fmax = 0;
			f.fd.timeline.allocated.forEach(function (v) { if (v > fmax) fmax = v; });
			checks.push('fw ' + f.k + ' timeline_max_allocated ' + fmax);
		}
		if (dv.peak_reserved_bytes)
			marks.push({ t: dv.peak_reserved_time_ns, color: C.peak, dash: true,
				label: 'peak ' + fmtBytes(dv.peak_reserved_bytes) });
		failuresOf(i).forEach(function (fl) {
			marks.push({ t: fl.time_ns, color: C.failure, label: 'failed: ' + fmtBytes(fl.requested_bytes) });
		});
		if (f) marks = marks.concat(oomMarks(i));
		var head = el('div');
		if (f) {
			parent.appendChild(el('h4', null, 'At the CUDA API: ' + dd.title + ' (PyTorch\'s segments count as cached there)'));
		} else {
			parent.appendChild(el('h3', null, dd.title));
			figLine(head, ['peak ', [dv.peak_reserved_bytes, 'report.devices.' + i + '.peak_reserved_bytes'], ' reserved at ',
				[dv.peak_reserved_time_ns, 'report.devices.' + i + '.peak_reserved_time_ns', fmtAt], ': reserved ',
				[dv.peak_reserved_bytes, 'report.devices.' + i + '.peak_reserved_bytes'], ' = allocated ',
				[dv.peak_allocated_bytes, 'report.devices.' + i + '.peak_allocated_bytes'], ' + cached ',
				[dv.cached_bytes_at_peak, 'report.devices.' + i + '.cached_bytes_at_peak']], 'figs');
			var u2 = usedParts(i, dv);
			if (u2.length) figLine(head, u2, 'figs beside');
		}
		parent.appendChild(head);
		var procs = (dd.processes || []).map(function (p) {
			var rp = R.processes.filter(function (q) { return q.pid === p.pid; })[0];
			return { label: 'pid ' + p.pid + (rp && rp.rank >= 0 ? ' (rank ' + rp.rank + ')' : ''),
				timeline: p.timeline, after_end: p.after_end };
		});
		var hold = timeline(parent, null, dd.timeline, dd.samples, marks,
			{ duration: R.duration_ns, dev: i, procs: procs, label: dd.title,
				pids: procs.length > 1 ? (dd.processes || []).map(function (p) { return p.pid; }) : null,
				onChange: function (u) { plots[i] = u; } });
		labelChecks.push(['device ' + i, hold.u]);
		plots.push(f ? fh.u : hold.u);
		tlControls.push(hold.select || null);
		/* the stacked areas add up to the device's own rows */
		var bad = 0;
		dd.timeline.t.forEach(function (t, r) {
			var sum = 0;
			procs.forEach(function (p) { sum += procAt(p, t); });
			if (sum !== dd.timeline.reserved[r]) bad++;
		});
		checks.push('device ' + i + ' processes ' + procs.length);
		checks.push('device ' + i + ' stack_rows ' + dd.timeline.t.length + ' mismatches ' + bad);
		var mx = 0;
		dd.timeline.reserved.forEach(function (v) { if (v > mx) mx = v; });
		timelineMax.push(mx);
		checks.push('device ' + i + ' peak_shown ' + dv.peak_reserved_bytes);
		checks.push('device ' + i + ' timeline_max ' + mx);
	});
	checks.push('devices ' + D.devices.length);
}

/* the marks' labels of every chart, once drawn: how many overlap; the
   steps' bands and the ranges drawn on it */
function labelCheck() {
	labelChecks.forEach(function (x) {
		checks.push(x[0] + ' labels ' + ((x[1] && x[1].labelBoxes) || []).length + ' overlaps ' + overlaps(x[1]));
		if (RR && x[1] && x[1].units)
			checks.push(x[0] + ' step_bands ' + x[1].units.bands + ' ranges ' + x[1].units.ranges);
	});
}

/* --- steps, ranges and tests (the report's "ranges and steps") ----------- */

function rangeWhere(pk, src) {
	var w = pk.range === null ? 'outside every range' : 'in range \u2018' + pk.range + '\u2019' +
		(pk.name !== pk.range ? ' (\u2018' + pk.name + '\u2019)' : '');
	return [w + (pk.step === null ? '' : ' (step ' + pk.step + ')') + ' at ', [pk.time_ns, src + '.time_ns', fmtAt]];
}
/* A step's row selected: every timeline shows that step, with a
   twentieth of its length on each side. */
function zoomToStep(r) {
	var a = r.s.start_ns / 1e9, b = r.s.end_ns / 1e9, pad = (b - a) / 20 || 1e-6;
	labelChecks.forEach(function (x) {
		if (x[1]) x[1].view(Math.max(0, a - pad), Math.min(R.duration_ns / 1e9, b + pad));
	});
	$('timelines').scrollIntoView();
}
function units() {
	var parent = $('units-body');
	if (!RR) {
		$('units').hidden = true;
		return;
	}
	var fw = !!RR.steps.concat(RR.tests).some(function (s) { return 'framework_peak_allocated' in s; });
	parent.appendChild(el('p', { class: 'hint' }, RR.instances + ' range instance' + (RR.instances === 1 ? '' : 's') + ' of ' +
		RR.ranges.length + ' range' + (RR.ranges.length === 1 ? '' : 's') + ', ' + RR.marks + ' mark' + (RR.marks === 1 ? '' : 's') +
		' (NVTX, memtrace\'s markers, pytest). On the timelines above: the steps as shaded bands, the outer ranges (those ' +
		'no other range holds, or a step holds) in a strip along the bottom, a lane per range.'));
	var lanes = Object.keys(unitLane);
	if (lanes.length) {
		var lg = el('p', { class: 'maplegend' }, 'The strip\'s lanes: ');
		/* the last lane holds every range after the first ones */
		lanes.slice(0, UNIT_LANES).forEach(function (name, k) {
			var it = el('span', { class: 'item' }), c = PALETTE[(k + 2) % PALETTE.length][0];
			it.appendChild(el('span', { class: 'legend-box', style: 'background:' + c }));
			it.appendChild(document.createTextNode(k === UNIT_LANES - 1 && lanes.length > UNIT_LANES ?
				name + ' and ' + (lanes.length - UNIT_LANES) + ' other ranges' : name));
			lg.appendChild(it);
		});
		parent.appendChild(lg);
	}
	RR.peaks.forEach(function (pk, k) {
		var src = 'report.ranges.peaks.' + k;
		figLine(parent, [(R.processes.length > 1 ? 'pid ' + pk.pid + ': ' : '') + 'peak ', [pk.reserved_bytes, src + '.reserved_bytes'],
			' reserved '].concat(rangeWhere(pk, src)), 'figs');
	});
	/* PyTorch's peak of allocated per process: where, and its split by
	   category (the text report's line) */
	(RR.framework_peaks || []).forEach(function (pk, k) {
		var src = 'report.ranges.framework_peaks.' + k, at = [], c = pk.categories, cs = src + '.categories.';
		if (pk.step !== null) at.push('step ' + pk.step);
		if (pk.phase !== null) at.push('phase ' + pk.phase);
		if (pk.module !== null) at.push('module ' + pk.module);
		var parts = [(R.processes.length > 1 ? 'pid ' + pk.pid + ': ' : '') + 'peak ',
			[pk.allocated_bytes, src + '.allocated_bytes'], ' allocated ' + (at.length ? 'in ' + at.join(', ') :
			pk.range === null ? 'outside every range' : 'in range \u2018' + pk.range + '\u2019')];
		if (c && c.parameters !== null)
			parts.push(': parameters ', [c.parameters, cs + 'parameters'], ', gradients ', [c.gradients, cs + 'gradients'],
				', optimizer state ', [c.optimizer_state, cs + 'optimizer_state'], ', activations ',
				[c.activations, cs + 'activations'], ', temporaries ', [c.temporaries, cs + 'temporaries']);
		else if (c)
			parts.push(': activations ', [c.activations, cs + 'activations'], ', other tensors ',
				[c.temporaries, cs + 'temporaries'], ' (no categories note)');
		if (c)
			parts.push('; cache ', [c.cache, cs + 'cache']);
		parts.push(' at ', [pk.time_ns, src + '.time_ns', fmtAt]);
		figLine(parent, parts, 'figs');
	});
	if (U && U.instances_left_out)
		parent.appendChild(el('p', { class: 'note' }, 'The timelines draw ranges of the first ' + U.instances_logged + ' of ' +
			(U.instances_logged + U.instances_left_out) + ' range instances that ended; ' + U.instances_left_out +
			' are left out there (the tables count them all).'));
	if (U && U.ranges_left_out)
		parent.appendChild(el('p', { class: 'note' }, 'The timelines draw the first ' + U.ranges.length + ' outer ranges; ' +
			U.ranges_left_out + ' more are left out there (the tables count them all).'));
	if (RR.steps.length) {
		var g = RR.growth;
		parent.appendChild(el('h3', null, 'Steps (' + RR.steps.length + ' instances of \u2018' +
			RR.ranges.filter(function (x) { return x.step; })[0].range + '\u2019)'));
		if (g) {
			var gl = ['Reserved at a step\'s end grows ', [g.reserved_per_step, 'report.ranges.growth.reserved_per_step', fmtBytes], ' a step'];
			if ('framework_allocated_per_step' in g)
				gl.push(', PyTorch\'s allocated ', [g.framework_allocated_per_step, 'report.ranges.growth.framework_allocated_per_step', fmtBytes], ' a step');
			gl.push('; the first step\'s peak is ', [g.first_step_peak_vs_median, 'report.ranges.growth.first_step_peak_vs_median', fmtBytes],
				' against the others\' median.');
			figLine(parent, gl, 'figs');
			if (g.site !== null)
				figLine(parent, ['Grows ', [g.site_bytes_per_step, 'report.ranges.growth.site_bytes_per_step', fmtBytes], ' a step from ' +
					g.site_name + ' (site ' + g.site + '), steps ' + g.from_step + '-' + g.to_step + '.'], 'figs');
		}
		var rows = RR.steps.map(function (s, k) { return { s: s, k: k }; }), sp = 'report.ranges.steps.';
		var cols = [
			{ label: 'step', num: 1, get: function (r) { return r.s.step; }, src: function (r) { return sp + r.k + '.step'; } },
			{ label: 'start', num: 1, get: function (r) { return r.s.start_ns; }, fmt: fmtAt, src: function (r) { return sp + r.k + '.start_ns'; } },
			{ label: 'peak reserved', num: 1, get: function (r) { return r.s.peak_reserved; }, fmt: fmtBytes, src: function (r) { return sp + r.k + '.peak_reserved'; } },
			{ label: 'at its start', num: 1, get: function (r) { return r.s.reserved_at_start; }, fmt: fmtBytes, src: function (r) { return sp + r.k + '.reserved_at_start'; } },
			{ label: 'at its end', num: 1, get: function (r) { return r.s.reserved_at_end; }, fmt: fmtBytes, src: function (r) { return sp + r.k + '.reserved_at_end'; } },
			{ label: 'growth (end - start)', num: 1, get: function (r) { return U.steps[r.k].growth_bytes; }, fmt: fmtBytes,
				src: function (r) { return 'units.steps.' + r.k + '.growth_bytes'; } }];
		if (fw)
			cols.push({ label: 'PyTorch allocated peak', num: 1, get: function (r) { return r.s.framework_peak_allocated; }, fmt: fmtBytes,
				src: function (r) { return sp + r.k + '.framework_peak_allocated'; } },
			{ label: 'allocated at its end', num: 1, get: function (r) { return r.s.framework_allocated_at_end; }, fmt: fmtBytes,
				src: function (r) { return sp + r.k + '.framework_allocated_at_end'; } });
		table(parent, cols, rows, zoomToStep, true);
		checks.push('units steps ' + rows.length);
	}
	parent.appendChild(el('h3', null, 'Ranges'));
	var rp = 'report.ranges.ranges.';
	table(parent, [
		{ label: 'range', get: function (r) { return r.g.range + (r.g.left_open ? ' (' + r.g.left_open + ' left open)' : ''); } },
		{ label: 'instances', num: 1, get: function (r) { return r.g.instances; }, src: function (r) { return rp + r.k + '.instances'; } },
		{ label: 'peak reserved', num: 1, get: function (r) { return r.g.peak_reserved; }, fmt: fmtBytes, src: function (r) { return rp + r.k + '.peak_reserved'; } },
		{ label: 'step of the peak', num: 1, get: function (r) { return r.g.peak_step === null ? '-' : r.g.peak_step; } },
		{ label: 'time inside', num: 1, get: function (r) { return r.g.total_ns; }, fmt: fmtNs, src: function (r) { return rp + r.k + '.total_ns'; } }
	], RR.ranges.map(function (g, k) { return { g: g, k: k }; }), null, true);
	checks.push('units ranges ' + RR.ranges.length);
	if (RR.tests.length) {
		var tp = 'report.ranges.tests.', key = fw ? 'framework_peak_allocated' : 'peak_reserved';
		parent.appendChild(el('h3', null, 'Tests (pytest): ' + (fw ? 'PyTorch\'s allocated' : 'the process\'s reserved')));
		table(parent, [
			{ label: 'test', where: 1, get: function (r) { return r.t.name; } },
			{ label: 'peak', num: 1, get: function (r) { return r.t[key]; }, fmt: fmtBytes, src: function (r) { return tp + r.k + '.' + key; } },
			{ label: 'leaked', num: 1, get: function (r) { return U.tests[r.k].leaked_bytes; }, fmt: fmtBytes,
				src: function (r) { return 'units.tests.' + r.k + '.leaked_bytes'; } }
		], RR.tests.map(function (t, k) { return { t: t, k: k }; }), null, true);
		checks.push('units tests ' + RR.tests.length);
	}
	var mu = RR.misuse, said = [];
	if (mu.pops_unmatched) said.push(mu.pops_unmatched + ' pop(s) with no range open on its thread and domain: left out');
	if (mu.ends_unmatched) said.push(mu.ends_unmatched + ' range end(s) with no start of that id: left out');
	if (mu.left_open) said.push(mu.left_open + ' range(s) left open when the process ended: measured to the end');
	if (mu.ended_on_another_thread) said.push(mu.ended_on_another_thread + ' range(s) ended on another thread than it started: measured across threads');
	if (mu.not_followed) said.push(mu.not_followed + ' range(s) opened while too many were open: not measured');
	said.forEach(function (x) { parent.appendChild(el('p', { class: 'note' }, x)); });
}

/* --- peak sites --------------------------------------------------------- */

function siteDetails(title, s, frames, hidden, extra) {
	var parts = extra ? extra.slice() : [];
	parts.push({ frames: frames, hidden: hidden, label: 'stack (innermost first)' });
	showDetails(title + (s ? ' (site ' + s + ')' : ''), parts);
}

/* The details of a tensor site: its name and all its frames. */
function fwSiteDetails(title, id, extra) {
	var rs = rfSiteById[id], parts = extra ? extra.slice() : [];
	parts.unshift({ text: fwSiteName(id) });
	parts.push({ label: 'stack (innermost first)', frames: rs ? rs.frames.map(function (f) {
		return { file: f.file, line: f.line, function: f.function, python: true };
	}) : [] });
	showDetails(title + ' (tensor site ' + id + ')', parts);
}

/* A table of tensor sites a moment held (framework.devices[k][key]: all of
   them; the report lists the top 10). */
function fwHeldTable(parent, k, key, what) {
	var all = FW.devices[k][key], rows = all.slice(0, 10).map(function (h, j) { return { h: h, j: j }; });
	var src = 'framework.devices.' + k + '.' + key + '.';
	table(parent, [
		{ label: 'held at the peak of ' + what, num: 1, get: function (r) { return r.h[1]; }, fmt: fmtBytes,
			src: function (r) { return src + r.j + '.1'; } },
		{ label: 'tensors', num: 1, get: function (r) { return r.h[2]; }, src: function (r) { return src + r.j + '.2'; } },
		{ label: 'tensor site', num: 1, get: function (r) { return r.h[0]; } },
		{ label: 'where (Python)', where: 1, get: function (r) { return fwSiteName(r.h[0]); } }
	], rows, function (r) {
		fwSiteDetails(fmtBytes(r.h[1]) + ' at the peak of ' + what, r.h[0]);
	}, false);
	if (all.length > rows.length)
		parent.appendChild(el('p', { class: 'hint' }, 'The top ' + rows.length + ' of ' + all.length +
			' tensor sites; the flame graph shows all of them.'));
	return rows.length;
}

function peakSites() {
	var parent = $('peak-sites'), shown = 0;
	R.devices.forEach(function (dv, i) {
		var f = fwDev(i), src = 'report.devices.' + i;
		if (f) {
			var rs = 'report.framework.devices.' + f.k;
			parent.appendChild(el('h3', null, D.devices[i].title + ': tensors'));
			figLine(parent, ['At the peak of allocated, ', [f.rd.peak_allocated.allocated_bytes, rs + '.peak_allocated.allocated_bytes'], ' at ',
				[f.rd.peak_allocated.time_ns, rs + '.peak_allocated.time_ns', fmtAt], ', by tensor site (the Python line that allocated):']);
			var nt = fwHeldTable(parent, f.k, 'peak_allocated', 'allocated');
			figLine(parent, ['At the peak of reserved, ', [f.rd.peak_reserved.reserved_bytes, rs + '.peak_reserved.reserved_bytes'], ' at ',
				[f.rd.peak_reserved.time_ns, rs + '.peak_reserved.time_ns', fmtAt], ':']);
			fwHeldTable(parent, f.k, 'peak_reserved', 'reserved');
			checks.push('fw ' + f.k + ' top_tensor_sites ' + nt);
			parent.appendChild(el('h4', null, 'At the CUDA API: the allocator\'s segments, the frame around the tensors'));
		} else {
			parent.appendChild(el('h3', null, D.devices[i].title));
		}
		figLine(parent, [[dv.peak_reserved_bytes, src + '.peak_reserved_bytes'], ' reserved at ',
			[dv.peak_reserved_time_ns, src + '.peak_reserved_time_ns', fmtAt]]);
		if (dv.peak_set_by)
			figLine(parent, ['The peak was reached by ' + dv.peak_set_by.api + ' of ', [dv.peak_set_by.bytes, src + '.peak_set_by.bytes'],
				(R.processes.length > 1 ? ' (pid ' + dv.peak_set_by.pid + ')' : '') + ' at ' + stackName(D.devices[i].peak_set_by) + '.']);
		var used = usedParts(i, dv);
		if (used.length) figLine(parent, ['The '].concat(used, ['.']), 'hint');
		var rows = (dv.peak_sites || []).map(function (r, j) { return { r: r, j: j }; });
		var n = D.devices[i].peak_sites.length, ps = src + '.peak_sites.';
		shown += table(parent, [
			{ label: 'held at peak', num: 1, get: function (x) { return x.r.bytes; }, fmt: fmtBytes, src: function (x) { return ps + x.j + '.bytes'; } },
			{ label: 'allocations', num: 1, get: function (x) { return x.r.count; }, src: function (x) { return ps + x.j + '.count'; } },
			{ label: 'processes', num: 1, get: function (x) { return x.r.processes; } },
			{ label: 'site', num: 1, get: function (x) { return x.r.site; } },
			{ label: 'where', where: 1, get: function (x) { return siteName(x.r.site) + (x.r.caching_allocator ? '  [caching allocator]' : ''); } }
		], rows, function (x) {
			siteDetails(fmtBytes(x.r.bytes) + ' at the peak', x.r.site, x.r.frames, x.r.hidden_frames, [{ text: siteName(x.r.site) }]);
		}, false);
		if (n > rows.length)
			parent.appendChild(el('p', { class: 'hint' }, 'The top ' + rows.length + ' of ' + n +
				' sites; the flame graph and the sites table show all of them.'));
		checks.push('device ' + i + ' top_sites ' + rows.length);
	});
	return shown;
}

/* --- icicle ------------------------------------------------------------- */

function colourOf(name) {
	var h = 0;
	for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
	return PALETTE[h % PALETTE.length];
}

/* items: [{bytes, frames (innermost first), site}] */
function buildTree(items) {
	var root = { name: 'all', bytes: 0, kids: {}, order: [] };
	items.forEach(function (it) {
		if (!it.bytes) return;
		root.bytes += it.bytes;
		var n = root, fr = it.frames && it.frames.length ? it.frames : [{ function: '(no stack)', file: null, line: 0 }];
		for (var i = fr.length - 1; i >= 0; i--) {
			var key = frameText(fr[i]);
			if (!n.kids[key]) { n.kids[key] = { name: key, frame: fr[i], bytes: 0, kids: {}, order: [], parent: n }; n.order.push(key); }
			n = n.kids[key];
			n.bytes += it.bytes;
		}
		n.site = it.site;
	});
	return root;
}

function icicle(root) {
	var box = $('icicle');
	box.textContent = '';
	var W = box.clientWidth || 900, H = 20, depth = 0, nodes = 0;
	function lay(n, x, w, d) {
		if (w < 2 || nodes > 3000) return;
		nodes++;
		if (d > depth) depth = d;
		var c = n === root ? ['#dddddd', '#000'] : colourOf(n.name);
		var e = el('div', { class: 'node', tabindex: '0', role: 'button',
			style: 'left:' + x + 'px;top:' + (d * H) + 'px;width:' + w + 'px;background:' + c[0] + ';color:' + c[1] },
			n.name + '  ' + fmtBytes(n.bytes));
		e.title = n.name + '\n' + fmtBytes(n.bytes) + (n.frame ? '\n' + frameFull(n.frame) : '');
		function act() {
			if (n === root && root.parent) icicle(root.parent);
			else if (n !== root) icicle(n);
		}
		e.addEventListener('click', act);
		e.addEventListener('keydown', function (ev) { if (ev.key === 'Enter') act(); });
		box.appendChild(e);
		var xx = x;
		n.order.map(function (k) { return n.kids[k]; }).sort(function (a, b) { return b.bytes - a.bytes; })
			.forEach(function (k) {
				var kw = n.bytes ? w * k.bytes / n.bytes : 0;
				lay(k, xx, kw, d + 1);
				xx += kw;
			});
	}
	if (!root.bytes) {
		box.appendChild(el('p', { class: 'hint' }, 'nothing live'));
		box.style.height = '2em';
		return;
	}
	lay(root, 0, W, 0);
	box.style.height = ((depth + 1) * H + 4) + 'px';
}

function flame() {
	var sel = $('flame-dev');
	if (FW) $('flame-cuda').hidden = false;
	R.devices.forEach(function (dv, i) { sel.appendChild(el('option', { value: String(i) }, D.devices[i].title)); });
	var at = null;
	if (!R.devices.length) {
		$('flame-note').textContent = 'No device memory in this run.';
		return;
	}
	function render() {
		var i = +sel.value || 0, dv = R.devices[i], mode = document.querySelector('input[name=flame-mode]:checked').value;
		var items = [], note = '', f = fwDev(i);
		if (f && mode !== 'cuda') {
			var fs = function (id) { var x = fwSiteById[id]; return x ? x.frames : []; };
			if (mode === 'peak' && at === null) {
				items = f.fd.peak_allocated.map(function (h) { return { bytes: h[1], frames: fs(h[0]), site: h[0] }; });
				note = 'Tensors live at the peak of allocated of ' + D.devices[i].title + ' (' + fmtAt(f.rd.peak_allocated.time_ns) + '): ' +
					fmtBytes(f.rd.peak_allocated.allocated_bytes) + ' allocated, ' + fmtBytes(f.rd.peak_allocated.reserved_bytes) + ' reserved; by Python line.';
			} else if (mode === 'peak') {
				var byT = {}, fm = f.fd.address_map;
				fm.blocks.forEach(function (b) { if (b[0] <= at && b[1] > at) byT[b[6]] = (byT[b[6]] || 0) + b[4]; });
				items = Object.keys(byT).map(function (k) { return { bytes: byT[k], frames: fs(+k), site: +k }; });
				note = 'Tensors live at ' + fmtAt(Math.round(at)) + ' on ' + D.devices[i].title + ', from the tensor address map' +
					(fm.shown < fm.total ? ' (its largest ' + fm.shown + ' of ' + fm.total + ' blocks)' : '') +
					'. Choose "at the peak" again to go back to the peak.';
			} else if (mode === 'exit') {
				items = RF.sites.filter(function (x) { return x.device === dv.device && x.exit_bytes; })
					.map(function (x) { return { bytes: x.exit_bytes, frames: fs(x.site), site: x.site }; });
				note = 'Tensors never freed, on device ' + dv.device + ' (PyTorch\'s cache is not in it: it holds no tensor).';
			} else {
				items = RF.leaks.filter(function (l) { return l.device === dv.device; })
					.map(function (l) { return { bytes: l.bytes, frames: fs(l.site), site: l.site }; });
				note = 'The tensor leak candidates of device ' + dv.device + ', by the bytes each left at exit.';
			}
			$('flame-note').textContent = note;
			icicle(buildTree(items));
			return;
		}
		if (mode === 'cuda') mode = 'peak';
		if (mode === 'peak' && at === null) {
			items = D.devices[i].peak_sites.map(function (p) { var s = siteById[p.site]; return { bytes: p.bytes, frames: s ? s.frames : [], site: p.site }; });
			note = 'Live at the peak of ' + D.devices[i].title + ' (' + fmtNs(dv.peak_reserved_time_ns) + '): ' +
				fmtBytes(dv.peak_allocated_bytes) + ' allocated, ' + fmtBytes(dv.peak_reserved_bytes) + ' reserved.';
		} else if (mode === 'peak') {
			/* a moment clicked on the timeline: the live allocations the
			   address map holds then (its largest boxes only) */
			var m = D.devices[i].address_map;
			var by = {}, gone = goneOf(D.devices[i]);
			(m ? m.boxes : []).forEach(function (b) {
				/* never freed: live until its process gave its memory back */
				var live = b[7] ? (gone[b[5]] === undefined || gone[b[5]] > at) : b[1] > at;
				if (b[0] <= at && live) by[b[6]] = (by[b[6]] || 0) + b[4];
			});
			items = Object.keys(by).map(function (k) { var s = siteById[k]; return { bytes: by[k], frames: s ? s.frames : [], site: +k }; });
			note = 'Live at ' + fmtNs(Math.round(at)) + ' on ' + D.devices[i].title + ', from the address map' +
				(m && m.shown < m.total ? ' (its largest ' + m.shown + ' of ' + m.total + ' allocations)' : '') +
				'. Choose "at the peak" again to go back to the peak.';
		} else if (mode === 'exit') {
			items = D.sites.filter(function (s) { return s.device === dv.device && s.live_at_exit_bytes; })
				.map(function (s) { return { bytes: s.live_at_exit_bytes, frames: s.frames, site: s.site }; });
			note = 'Left live when each process exited, on device ' + dv.device + ' (caching allocators\' segments included).';
		} else {
			items = (R.leaks || []).filter(function (l) { return l.device === dv.device; })
				.map(function (l) { return { bytes: l.bytes, frames: l.frames, site: l.site }; });
			note = 'The leak candidates of device ' + dv.device + ', by the bytes each left at exit.';
		}
		$('flame-note').textContent = note;
		icicle(buildTree(items));
	}
	sel.addEventListener('change', function () { at = null; render(); });
	document.querySelectorAll('input[name=flame-mode]').forEach(function (r) {
		r.addEventListener('change', function () { at = null; render(); });
	});
	flameAt = function (i, t) {
		at = t;
		sel.value = String(i);
		document.querySelector('input[name=flame-mode][value=peak]').checked = true;
		render();
	};
	render();
}

/* --- tables of the report ----------------------------------------------- */

function leaks() {
	var rows = (R.leaks || []).map(function (r, j) { return { r: r, j: j }; }), p = $('leaks-table');
	if (RF) {
		/* PyTorch's tensors first: the report's tensor leak candidates */
		var tl = RF.leaks.map(function (r, j) { return { r: r, j: j }; });
		p.appendChild(el('h3', null, 'Tensor leak candidates (PyTorch)'));
		if (!tl.length)
			p.appendChild(el('p', null, 'None: every tensor was freed, and no tensor site kept growing.'));
		else
			table(p, [
				{ label: 'left at exit', num: 1, get: function (x) { return x.r.bytes; }, fmt: fmtBytes,
					src: function (x) { return 'report.framework.leaks.' + x.j + '.bytes'; } },
				{ label: 'tensors', num: 1, get: function (x) { return x.r.count; }, src: function (x) { return 'report.framework.leaks.' + x.j + '.count'; } },
				{ label: 'why', get: function (x) { return x.r.reasons.map(function (w) { return w === 'live_at_exit' ? 'left at exit' : w; }).join(', ') +
					(x.r.interrupted ? ' (interrupted: its process did not exit cleanly, so it may not be a leak)' : ''); } },
				{ label: 'highest live', num: 1, get: function (x) { return x.r.peak_bytes; }, fmt: fmtBytes,
					src: function (x) { return 'report.framework.leaks.' + x.j + '.peak_bytes'; } },
				{ label: 'device', num: 1, get: function (x) { return x.r.device; } },
				{ label: 'tensor site', num: 1, get: function (x) { return x.r.site; } },
				{ label: 'where (Python)', where: 1, get: function (x) { return fwSiteName(x.r.site); } }
			], tl, function (x) {
				fwSiteDetails('Tensor leak candidate: ' + fmtBytes(x.r.bytes) + ' left at exit', x.r.site);
			}, true);
		(RF.cache_at_exit || []).forEach(function (c, j) {
			figLine(p, ['Cache held at exit (PyTorch\'s free blocks, not a leak): pid ' + c.pid + ' device ' + c.device + ' ',
				[c.bytes, 'report.framework.cache_at_exit.' + j + '.bytes']], 'hint');
		});
		checks.push('tensor_leaks ' + tl.length);
		p.appendChild(el('h3', null, 'At the CUDA API'));
	}
	if (!rows.length)
		p.appendChild(el('p', null, 'No leak candidate: nothing was left live at exit, and no site kept growing.'));
	else
		table(p, [
			{ label: 'left at exit', num: 1, get: function (x) { return x.r.bytes; }, fmt: fmtBytes, src: function (x) { return 'report.leaks.' + x.j + '.bytes'; } },
			{ label: 'allocations', num: 1, get: function (x) { return x.r.count; }, src: function (x) { return 'report.leaks.' + x.j + '.count'; } },
			{ label: 'why', get: function (x) { return (x.r.reasons || []).map(function (w) { return w === 'live_at_exit' ? 'left at exit' : w; }).join(', ') +
				(x.r.interrupted ? ' (interrupted: a process holding it did not exit cleanly, so it may not be a leak)' : ''); } },
			{ label: 'device', num: 1, get: function (x) { return x.r.device; } },
			{ label: 'site', num: 1, get: function (x) { return x.r.site; } },
			{ label: 'where', where: 1, get: function (x) { return siteName(x.r.site); } }
		], rows, function (x) {
			siteDetails('Leak candidate: ' + fmtBytes(x.r.bytes) + ' left at exit', x.r.site, x.r.frames, x.r.hidden_frames, [{ text: siteName(x.r.site) }]);
		}, true);
	if ((R.cache_at_exit || []).length) {
		p.appendChild(el('p', { class: 'hint' }, 'Held by a caching allocator at exit (its cache, not a leak):'));
		table(p, [
			{ label: 'held', num: 1, get: function (x) { return x.r.bytes; }, fmt: fmtBytes, src: function (x) { return 'report.cache_at_exit.' + x.j + '.bytes'; } },
			{ label: 'allocations', num: 1, get: function (x) { return x.r.count; } },
			{ label: 'site', num: 1, get: function (x) { return x.r.site; } },
			{ label: 'where', where: 1, get: function (x) { return siteName(x.r.site) + '  [caching allocator]'; } }
		], R.cache_at_exit.map(function (r, j) { return { r: r, j: j }; }), null, false);
	}
	checks.push('leaks ' + rows.length);
}

/* PyTorch's out-of-memory errors: the verdict, the state then, the
   request and the tensor sites that held the memory. */
function fwOoms(p) {
	var rows = RF.ooms.map(function (o, j) { return { o: o, j: j }; });
	p.appendChild(el('h3', null, 'PyTorch\'s out-of-memory errors (' + rows.length + ')'));
	rows.forEach(function (x) {
		var o = x.o, src = 'report.framework.ooms.' + x.j;
		var box = el('div', { class: 'oom' });
		figLine(box, [[o.state.time_ns, src + '.state.time_ns', fmtAt], ' pid ' + o.pid + ' device ' + o.device + ': request of ',
			[o.requested_bytes, src + '.requested_bytes'], ' failed: ', [o.verdict, src + '.verdict', String]], 'verdict');
		figLine(box, fwState(o.state, src + '.state'), 'figs');
		var free = ['device free ', [o.device_free_bytes, src + '.device_free_bytes'], ' (as the framework saw it)'];
		if (o.device_total_bytes !== null)
			free.push(' of ', [o.device_total_bytes, src + '.device_total_bytes'], '; outside the framework ',
				[Math.max(0, o.outside_framework_bytes), src + '.outside_framework_bytes']);
		if (o.cuda_reserved_bytes !== null && o.cuda_reserved_bytes !== undefined)
			free.push('; memtrace\'s reserved of the process ', [o.cuda_reserved_bytes, src + '.cuda_reserved_bytes']);
		figLine(box, free, 'figs');
		table(box, [
			{ label: 'top holders', num: 1, get: function (h) { return h.h.bytes; }, fmt: fmtBytes, src: function (h) { return src + '.top_holders.' + h.k + '.bytes'; } },
			{ label: 'tensors', num: 1, get: function (h) { return h.h.count; }, src: function (h) { return src + '.top_holders.' + h.k + '.count'; } },
			{ label: 'tensor site', num: 1, get: function (h) { return h.h.site; } },
			{ label: 'where (Python)', where: 1, get: function (h) { return fwSiteName(h.h.site); } }
		], o.top_holders.map(function (h, k) { return { h: h, k: k }; }), function (h) {
			fwSiteDetails(fmtBytes(h.h.bytes) + ' held at the out-of-memory error', h.h.site);
		}, false);
		p.appendChild(box);
		checks.push('fw_oom ' + x.j + ' verdict ' + o.verdict);
	});
	checks.push('fw_ooms ' + rows.length);
}

function failures() {
	var rows = (R.failures || []).map(function (r, j) { return { r: r, j: j, n: D.failures[j] }; }), p = $('failures-table');
	if (RF && RF.ooms.length) {
		fwOoms(p);
		p.appendChild(el('h3', null, 'Failed calls at the CUDA API'));
	}
	if (!rows.length)
		p.appendChild(el('p', null, 'No allocation failed.'));
	else
		table(p, [
			{ label: 'time', num: 1, get: function (x) { return x.r.time_ns; }, fmt: fmtAt, src: function (x) { return 'report.failures.' + x.j + '.time_ns'; } },
			{ label: 'pid', num: 1, get: function (x) { return x.r.pid; } },
			{ label: 'call', get: function (x) { return x.r.api + ' of ' + fmtBytes(x.r.requested_bytes) + ' on device ' + x.r.device; } },
			{ label: 'error', get: function (x) { return (x.r.error_name || 'unknown error') + ' (' + x.r.error + ')'; } },
			{ label: 'reserved then', num: 1, get: function (x) { return x.r.reserved_bytes; }, fmt: fmtBytes, src: function (x) { return 'report.failures.' + x.j + '.reserved_bytes'; } },
			{ label: 'device free after', num: 1, get: function (x) { return x.r.device_free_bytes; }, fmt: fmtBytes,
				src: function (x) { return x.r.device_free_bytes === null ? null : 'report.failures.' + x.j + '.device_free_bytes'; } },
			{ label: 'top holders', where: 1, get: function (x) {
				return (x.r.top_holders || []).map(function (h, k) { return fmtBytes(h.bytes) + '  ' + stackName(x.n.holders[k]); }).join('\n');
			} },
			{ label: 'at', where: 1, get: function (x) { return stackName(x.n); } }
		], rows, function (x) {
			var r = x.r;
			var parts = [{ text: r.api + ' of ' + fmtBytes(r.requested_bytes) + ' failed with ' + (r.error_name || r.error) +
				' at ' + fmtAt(r.time_ns) + ' (pid ' + r.pid + ', thread ' + r.tid + '); the process held ' +
				fmtBytes(r.reserved_bytes) + ' on device ' + r.device + '.' }, { frames: r.frames, hidden: r.hidden_frames, label: 'the failed call: ' + stackName(x.n) }];
			(r.top_holders || []).forEach(function (h, k) {
				parts.push({ frames: h.frames, hidden: h.hidden_frames, label: 'holder ' + (k + 1) + ': ' + fmtBytes(h.bytes) + ' in ' + h.count + ' allocations, ' + stackName(x.n.holders[k]) });
			});
			showDetails('Failed allocation', parts);
		}, true);
	if (R.failures_total > rows.length)
		p.appendChild(el('p', { class: 'note' }, rows.length + ' of ' + R.failures_total + ' failures listed.'));
	checks.push('failures ' + rows.length);
	retries();
}

/* The report's out-of-memory retries: a failed allocation, frees on the
   same thread, then a retry (a caching allocator that ran out). */
function retries() {
	var p = $('failures-table'), rows = (R.oom_retries || []).map(function (r, j) { return { r: r, j: j }; });
	if (!rows.length) { checks.push('oom_retries 0'); return; }
	p.appendChild(el('h3', null, 'Out-of-memory retries (a failed allocation, frees, then a retry: a fragmented cache)'));
	rows.forEach(function (x) {
		var r = x.r, src = 'report.oom_retries.' + x.j;
		figLine(p, [[r.time_ns, src + '.time_ns', fmtAt], ' pid ' + r.pid + ' device ' + r.device + ': ',
			[r.requested_bytes, src + '.requested_bytes'], ' failed, ' + r.frees + ' free' + (r.frees === 1 ? '' : 's') + ' released ',
			[r.freed_bytes, src + '.freed_bytes'], ', retry of ', [r.retry_bytes, src + '.retry_bytes'],
			r.retry_result ? ' failed again' : ' succeeded'], 'figs retry');
	});
	checks.push('oom_retries ' + rows.length);
}

function sitesTable() {
	/* what each site held at its device's peak: the model's row for it
	   (a site is of one device) */
	var peakOf = {}, peakSrc = {}, idx = {};
	D.devices.forEach(function (d, i) {
		d.peak_sites.forEach(function (p, j) { peakOf[p.site] = p.bytes; peakSrc[p.site] = 'devices.' + i + '.peak_sites.' + j + '.bytes'; });
	});
	D.sites.forEach(function (s, k) { idx[s.site] = k; });
	var n = table($('sites-table'), [
		{ label: 'site', num: 1, get: function (s) { return s.site; } },
		{ label: 'device', num: 1, get: function (s) { return s.device; }, fmt: function (v) { return v < 0 ? 'pinned host' : v; } },
		{ label: 'at the peak', num: 1, get: function (s) { return peakOf[s.site] || 0; }, fmt: function (v) { return v ? fmtBytes(v) : ''; },
			src: function (s) { return peakSrc[s.site] || null; } },
		{ label: 'allocations', num: 1, get: function (s) { return s.allocations; } },
		{ label: 'allocated in all', num: 1, get: function (s) { return s.allocated_bytes; }, fmt: fmtBytes,
			src: function (s) { return 'sites.' + idx[s.site] + '.allocated_bytes'; } },
		{ label: 'live at exit', num: 1, get: function (s) { return s.live_at_exit_bytes; }, fmt: fmtBytes,
			src: function (s) { return 'sites.' + idx[s.site] + '.live_at_exit_bytes'; } },
		{ label: 'processes', num: 1, get: function (s) { return s.processes; } },
		{ label: 'where', where: 1, get: function (s) { return siteName(s.site) + (s.caching_allocator ? '  [caching allocator]' : ''); } }
	], D.sites, function (s) {
		siteDetails('Site', s.site, s.frames, 0, [{ text: siteName(s.site) }, { text: s.allocations + ' allocations, ' + fmtBytes(s.allocated_bytes) +
			' in all; ' + fmtBytes(s.live_at_exit_bytes) + ' live at exit.' }]);
	}, true);
	checks.push('sites ' + n);
	if (!RF) return;
	$('sites-table').appendChild(el('h3', null, 'Tensor sites (PyTorch)'));
	var nt = table($('sites-table'), [
		{ label: 'tensor site', num: 1, get: function (x) { return x.s.site; } },
		{ label: 'device', num: 1, get: function (x) { return x.s.device; } },
		{ label: 'tensors', num: 1, get: function (x) { return x.s.allocs; }, src: function (x) { return 'report.framework.sites.' + x.j + '.allocs'; } },
		{ label: 'allocated in all', num: 1, get: function (x) { return x.s.bytes; }, fmt: fmtBytes, src: function (x) { return 'report.framework.sites.' + x.j + '.bytes'; } },
		{ label: 'highest live', num: 1, get: function (x) { return x.s.peak_bytes; }, fmt: fmtBytes, src: function (x) { return 'report.framework.sites.' + x.j + '.peak_bytes'; } },
		{ label: 'never freed', num: 1, get: function (x) { return x.s.exit_bytes; }, fmt: fmtBytes, src: function (x) { return 'report.framework.sites.' + x.j + '.exit_bytes'; } },
		{ label: 'where (Python)', where: 1, get: function (x) { return fwSiteName(x.s.site); } }
	], RF.sites.map(function (s, j) { return { s: s, j: j }; }), function (x) { fwSiteDetails('Tensor site', x.s.site); }, true);
	checks.push('tensor_sites ' + nt);
}

function processes() {
	var n = table($('proc-table'), [
		{ label: 'pid', num: 1, get: function (p) { return p.pid; } },
		{ label: 'parent', num: 1, get: function (p) { return p.ppid; } },
		{ label: 'rank', num: 1, get: function (p) { return p.rank; }, fmt: function (v) { return v < 0 ? '' : v; } },
		{ label: 'command', where: 1, get: function (p) { return (p.argv || [p.command]).join(' '); } },
		{ label: 'executable', where: 1, get: function (p) { return p.exe; } },
		{ label: 'ended', get: function (p) {
			return p.ended === 'exit' || p.ended === '_exit' ? p.ended + '(' + p.exit_status + ')' : (p.ended || 'unknown');
		} },
		{ label: 'peak reserved', num: 1, get: function (p) { return p.peak_reserved_bytes; }, fmt: fmtBytes,
			src: function (p) { return 'report.processes.' + R.processes.indexOf(p) + '.peak_reserved_bytes'; } },
		{ label: 'events', num: 1, get: function (p) { return p.events; } },
		{ label: 'failed', num: 1, get: function (p) { return p.failed; } }
	], R.processes, function (p) {
		showDetails('Process ' + p.pid, [{ text: 'executable: ' + p.exe }, { text: 'trace: ' + p.trace },
			{ text: 'host: ' + p.hostname }]);
	}, true);
	/* what the figures may lack or count twice, as the report says it
	   under the process */
	var nw = 0;
	(D.processes || []).forEach(function (x) {
		x.warnings.forEach(function (w) {
			$('proc-table').appendChild(el('p', { class: 'note warning' }, 'pid ' + x.pid + ': warning: ' + w));
			nw++;
		});
	});
	checks.push('processes ' + n);
	checks.push('warnings ' + nw);
}

function shm() {
	var s = R.shm || {}, p = $('shm-table');
	p.appendChild(el('p', null, (s.created || 0) + ' segments created, ' + (s.attached || 0) + ' attached; peak ' +
		fmtBytes(s.peak_bytes || 0) + '; ' + (s.present_at_exit || 0) + ' still present at exit (' +
		fmtBytes(s.present_bytes || 0) + ').'));
	var rows = s.segments_present || [];
	if (rows.length) {
		var keys = Object.keys(rows[0]).filter(function (k) { return typeof rows[0][k] !== 'object'; });
		table(p, keys.map(function (k) {
			return { label: k.replace(/_/g, ' '), num: typeof rows[0][k] === 'number',
				get: function (r) { return r[k]; }, fmt: /bytes$/.test(k) ? fmtBytes : null,
				src: /bytes$/.test(k) ? function (r) { return 'report.shm.segments_present.' + rows.indexOf(r) + '.' + k; } : null };
		}), rows, null, true);
	}
	checks.push('shm_segments ' + rows.length);
}

/* --- address maps ------------------------------------------------------- */

/* pid -> when the memory it left live went back to the device: the end of
   its own timeline on the device, when that ends at 0 (after_end) */
function goneOf(dd) {
	var gone = {};
	(dd.processes || []).forEach(function (p) {
		if (!p.after_end && p.timeline.t.length) gone[p.pid] = p.timeline.t[p.timeline.t.length - 1];
	});
	return gone;
}

function maps() {
	var parent = $('maps'), tip = $('tip');
	D.devices.forEach(function (dd, i) {
		var m = dd.address_map, fw = fwDev(i);
		if (fw) { fwMap(parent, dd, i, fw); return; }
		parent.appendChild(el('h3', null, dd.title));
		if (!m || !m.boxes.length) {
			parent.appendChild(el('p', { class: 'hint' }, 'no allocation on this device'));
			checks.push('map ' + i + ' boxes 0');
			return;
		}
		parent.appendChild(el('p', { class: m.shown < m.total ? 'note' : 'hint' }, m.shown < m.total ?
			'The largest ' + m.shown + ' of ' + m.total + ' allocations are drawn.' :
			'All ' + m.total + ' allocations are drawn.'));
		/* colours: the sites that held most at the peak, then the others */
		var colour = {}, k = 0, legend = el('div', { class: 'maplegend' });
		dd.peak_sites.concat(m.boxes.map(function (b) { return { site: b[6] }; })).forEach(function (p) {
			if (colour[p.site] || k >= PALETTE.length) return;
			colour[p.site] = PALETTE[k++][0];
			var it = el('span', { class: 'item' });
			it.appendChild(el('span', { class: 'legend-box', style: 'background:' + colour[p.site] }));
			var s = siteById[p.site];
			it.appendChild(document.createTextNode(p.site ? 'site ' + p.site + (s ? ': ' + siteName(p.site) : '') :
				'no site of its own (a VMM mapping: its memory is its cuMemCreate\'s site)'));
			legend.appendChild(it);
		});
		if (Object.keys(colour).length < Object.keys(m.boxes.reduce(function (a, b) { a[b[6]] = 1; return a; }, {})).length) {
			var it = el('span', { class: 'item' });
			it.appendChild(el('span', { class: 'legend-box', style: 'background:' + C.other }));
			it.appendChild(document.createTextNode('other sites'));
			legend.appendChild(it);
		}
		parent.appendChild(legend);
		var W = Math.max(400, Math.min(parent.clientWidth || 900, 1400) - 10), H = 320, L = 70, B = 24;
		var cv = el('canvas', { class: 'map', width: String(W * devicePixelRatio), height: String(H * devicePixelRatio),
			style: 'width:' + W + 'px;height:' + H + 'px', role: 'img',
			'aria-label': 'address map of ' + dd.title + ': ' + m.shown + ' allocations' });
		parent.appendChild(cv);
		var ymax = 0, tmax = R.duration_ns || 1, gone = goneOf(dd);
		/* what a process left live is drawn until its end when it went
		   back to the device then (as the timeline drops it there) */
		function endOf(b) { return b[7] && gone[b[5]] !== undefined ? gone[b[5]] : b[1]; }
		m.boxes.forEach(function (b) { if (b[3] > ymax) ymax = b[3]; });
		var ctx = cv.getContext('2d');
		ctx.scale(devicePixelRatio, devicePixelRatio);
		function X(t) { return L + (W - L - 8) * t / tmax; }
		function Y(y) { return H - B - (H - B - 8) * y / ymax; }
		ctx.fillStyle = '#fff';
		ctx.fillRect(0, 0, W, H);
		m.boxes.forEach(function (b) {
			var x0 = X(b[0]), x1 = X(endOf(b)), y0 = Y(b[3]), y1 = Y(b[2]);
			ctx.fillStyle = colour[b[6]] || C.other;
			ctx.fillRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
			if (x1 - x0 > 4 && y1 - y0 > 4) { ctx.strokeStyle = '#fff'; ctx.lineWidth = 0.5; ctx.strokeRect(x0, y0, x1 - x0, y1 - y0); }
		});
		ctx.fillStyle = '#333';
		ctx.font = '11px sans-serif';
		ctx.fillText('0', L - 12, H - B + 4);
		ctx.fillText(fmtBytes(ymax), 2, 14);
		ctx.fillText('0', L, H - 8);
		ctx.fillText(fmtNs(tmax), W - 60, H - 8);
		ctx.fillText('time →', (W - L) / 2, H - 8);
		function at(e) {
			var r = cv.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
			for (var q = m.boxes.length - 1; q >= 0; q--) {
				var b = m.boxes[q];
				if (x >= X(b[0]) - 1 && x <= X(endOf(b)) + 1 && y >= Y(b[3]) - 1 && y <= Y(b[2]) + 1) return b;
			}
			return null;
		}
		function describe(b) {
			var s = siteById[b[6]];
			return fmtBytes(b[4]) + ' at ' + b[8] + ' (pid ' + b[5] + ')\nallocated at ' + fmtNs(b[0]) + ', ' +
				(b[7] ? (gone[b[5]] !== undefined ? 'never freed; went back to the device when its process ended at ' + fmtNs(gone[b[5]]) :
					'still live at the end') : 'freed at ' + fmtNs(b[1])) + '\n' + (s ? siteName(b[6]) + ' (site ' + b[6] + ')' : 'no site of its own (a mapping)');
		}
		hoverTip(cv, tip, at, describe);
		function open(b) {
			var s = siteById[b[6]];
			siteDetails('Allocation of ' + fmtBytes(b[4]), b[6], s ? s.frames : [], 0, [{ text: describe(b) }]);
		}
		cv.addEventListener('click', function (e) {
			var b = at(e);
			if (b) open(b);
		});
		/* without a mouse: Tab to the map, the arrow keys step through the
		   boxes in allocation order (then by address), Home and End go to
		   the first and last; the details panel follows the selected box */
		var base = document.createElement('canvas');
		base.width = cv.width;
		base.height = cv.height;
		base.getContext('2d').drawImage(cv, 0, 0);
		var order = m.boxes.slice().sort(function (a, b) { return a[0] - b[0] || a[2] - b[2]; }), cur = -1;
		cv.setAttribute('tabindex', '0');
		cv.setAttribute('aria-keyshortcuts', 'ArrowLeft ArrowRight ArrowUp ArrowDown Home End');
		cv.addEventListener('keydown', function (e) {
			var n = order.length, k = cur;
			if (e.key === 'ArrowRight' || e.key === 'ArrowDown') k = Math.min(n - 1, cur + 1);
			else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') k = Math.max(0, cur - 1);
			else if (e.key === 'Home') k = 0;
			else if (e.key === 'End') k = n - 1;
			else if (e.key === 'Enter' && cur >= 0) k = cur;
			else return;
			e.preventDefault();
			cur = k;
			var b = order[k];
			ctx.save();
			ctx.setTransform(1, 0, 0, 1, 0, 0);
			ctx.drawImage(base, 0, 0);
			ctx.restore();
			var x0 = X(b[0]), x1 = X(endOf(b)), y0 = Y(b[3]), y1 = Y(b[2]);
			ctx.strokeStyle = '#000';
			ctx.lineWidth = 2;
			ctx.strokeRect(x0 - 2, y0 - 2, Math.max(1, x1 - x0) + 4, Math.max(1, y1 - y0) + 4);
			cv.setAttribute('aria-label', 'address map of ' + dd.title + ': allocation ' + (k + 1) + ' of ' + n + ', ' +
				fmtBytes(b[4]) + ' at ' + b[8]);
			open(b);
			cv.dataset.selected = String(b[4]);
		});
		checks.push('map ' + i + ' boxes ' + m.shown);
		active(parent, dd, i, colour);
	});
}

/* PyTorch's "active memory timeline": the live allocations of the address
   map stacked over time, each a band from its allocation to its free,
   stacked in allocation order (a band moves down when one below it is
   freed), coloured by site. Beyond POINTS band corners only the largest
   allocations are drawn, and the page says so. */
var ACTIVE_POINTS = 2000000, ACTIVE_FALLBACK = 2000;

function activeLayout(boxes, tmax, gone) {
	var ev = [];
	boxes.forEach(function (b, k) {
		ev.push([b[0], 1, k]);
		if (!b[7]) ev.push([b[1], 0, k]);
		else if (gone[b[5]] !== undefined) ev.push([gone[b[5]], 0, k]);
	});
	/* frees before allocations at the same time; allocations in order */
	ev.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1] || a[2] - b[2]; });
	var live = [], pts = boxes.map(function () { return null; }), total = 0, max = 0, npts = 0;
	for (var e = 0; e < ev.length; e++) {
		var t = ev[e][0], k = ev[e][2], b = boxes[k];
		if (ev[e][1]) {
			pts[k] = [t, total];
			live.push(k);
			total += b[4];
			npts++;
		} else {
			var j = live.indexOf(k), off = pts[k][pts[k].length - 1];
			pts[k].push(t);
			for (var q = j + 1; q < live.length; q++) {
				var p = pts[live[q]];
				p.push(t, p[p.length - 1] - b[4]);
			}
			npts += live.length - j;
			live.splice(j, 1);
			total -= b[4];
			if (npts > ACTIVE_POINTS) return null;
			void off;
		}
		if (total > max) max = total;
	}
	live.forEach(function (k) { pts[k].push(tmax); });
	return { pts: pts, max: max };
}

function active(parent, dd, i, colour, fo) {
	var m = fo ? fo.map : dd.address_map, tip = $('tip'), tmax = R.duration_ns || 1;
	/* what a process left live went back to the device when it ended
	   (its own timeline ends at 0): its bands end there, not at the run's end */
	var gone = fo ? {} : goneOf(dd);
	var boxes = fo ? fo.boxes : m.boxes, lay = activeLayout(boxes, tmax, gone), note = '';
	if (!lay) {
		boxes = m.boxes.slice().sort(function (a, b) { return b[4] - a[4]; }).slice(0, ACTIVE_FALLBACK);
		lay = activeLayout(boxes, tmax, gone);
		note = 'Too many moves to draw: the largest ' + boxes.length + ' allocations are stacked. ';
	}
	parent.appendChild(el('h4', null, (fo ? 'Active tensor memory: ' : 'Active memory: ') + dd.title));
	if (m.shown < m.total) note += 'Only the address map\'s largest ' + m.shown + ' of ' + m.total + ' allocations are stacked.';
	parent.appendChild(el('p', { class: note ? 'note' : 'hint' }, note || (fo ?
		'Every tensor\'s block stacked, oldest at the bottom: a band runs from its allocation to its free (free_requested), so the highest stack is the peak of allocated.' :
		'Every live allocation stacked, oldest at the bottom: a band runs from its allocation to its free.')));
	if (fo) figLine(parent, ['Peak of allocated ', fo.peak], 'hint');
	var W = Math.max(400, Math.min(parent.clientWidth || 900, 1400) - 10), H = 260, L = 70, B = 24;
	var cv = el('canvas', { class: 'map active', width: String(W * devicePixelRatio), height: String(H * devicePixelRatio),
		style: 'width:' + W + 'px;height:' + H + 'px', role: 'img',
		'aria-label': 'active memory of ' + dd.title + ': ' + boxes.length + ' allocations stacked' });
	parent.appendChild(cv);
	var ymax = lay.max || 1, ctx = cv.getContext('2d');
	ctx.scale(devicePixelRatio, devicePixelRatio);
	function X(t) { return L + (W - L - 8) * t / tmax; }
	function Y(y) { return H - B - (H - B - 8) * y / ymax; }
	ctx.fillStyle = '#fff';
	ctx.fillRect(0, 0, W, H);
	boxes.forEach(function (b, k) {
		var p = lay.pts[k];
		/* p: t0, off0, t1, off1, ..., t_end: a step band */
		ctx.beginPath();
		ctx.moveTo(X(p[0]), Y(p[1]));
		for (var q = 2; q < p.length; q += 2) {
			ctx.lineTo(X(p[q]), Y(p[q - 1]));
			if (q + 1 < p.length) ctx.lineTo(X(p[q]), Y(p[q + 1]));
		}
		for (q = p.length - 1; q >= 2; q -= 2) {
			ctx.lineTo(X(p[q]), Y(p[q - 1] + b[4]));
			ctx.lineTo(X(p[q - 2]), Y(p[q - 1] + b[4]));
		}
		ctx.closePath();
		ctx.fillStyle = colour[b[6]] || C.other;
		ctx.fill();
		if (Y(0) - Y(b[4]) > 3) { ctx.strokeStyle = '#fff'; ctx.lineWidth = 0.5; ctx.stroke(); }
	});
	ctx.fillStyle = '#333';
	ctx.font = '11px sans-serif';
	ctx.fillText('0', L - 12, H - B + 4);
	ctx.fillText(fmtBytes(fo ? fo.peak[0] : lay.max), 2, 14);
	ctx.fillText('0', L, H - 8);
	ctx.fillText(fmtNs(tmax), W - 60, H - 8);
	ctx.fillText('time →', (W - L) / 2, H - 8);
	(fo ? fo.marks : []).forEach(function (mk) {
		ctx.strokeStyle = mk.color;
		ctx.lineWidth = 1.5;
		ctx.beginPath();
		ctx.moveTo(X(mk.t), 8);
		ctx.lineTo(X(mk.t), H - B);
		ctx.stroke();
	});
	/* the band under the pointer: the live ones at that time, in order */
	function at(e) {
		var r = cv.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
		var t = (x - L) * tmax / (W - L - 8), v = (H - B - y) * ymax / (H - B - 8), off = 0;
		if (t < 0 || v < 0) return null;
		for (var k = 0; k < boxes.length; k++) {
			var p = lay.pts[k], b = boxes[k];
			if (p[0] > t || p[p.length - 1] <= t) continue;
			if (v >= off && v < off + b[4]) return b;
			off += b[4];
		}
		return null;
	}
	function describe(b) {
		if (fo) return fo.describe(b);
		var s = siteById[b[6]];
		var end = b[7] ? (gone[b[5]] !== undefined ? gone[b[5]] : tmax) : b[1];
		return fmtBytes(b[4]) + ' (pid ' + b[5] + ', ' + b[8] + ')\nlive ' + fmtNs(end - b[0]) + ': from ' + fmtNs(b[0]) +
			(b[7] ? ' to ' + (gone[b[5]] !== undefined ? 'its process\'s end at ' + fmtNs(end) : 'the end') + ' (never freed)' :
				' to ' + fmtNs(b[1])) + '\n' +
			(s ? 'site ' + b[6] + ': ' + siteName(b[6]) + '\n' + s.frames.slice(0, 12).map(frameText).join('\n') : 'no site of its own (a mapping)');
	}
	hoverTip(cv, tip, at, describe);
	cv.addEventListener('click', function (e) {
		var b = at(e), s = b && siteById[b[6]];
		if (b && fo) fo.open(b);
		else if (b) siteDetails('Allocation of ' + fmtBytes(b[4]), b[6], s ? s.frames : [], 0, [{ text: describe(b) }]);
	});
	checks.push((fo ? 'fw_active ' : 'active ') + i + ' bands ' + boxes.length + ' max ' + lay.max);
}

/* The tensor-level address map of a device PyTorch's allocator ran on:
   its segments (what the CUDA API sees) drawn as frames, the tensors'
   blocks inside them coloured by tensor site (the Python line), the OOMs
   marked; then active memory of the same blocks. */
function fwMap(parent, dd, i, f) {
	var m = f.fd.address_map, tip = $('tip'), src = 'report.framework.devices.' + f.k;
	parent.appendChild(el('h3', null, dd.title + ': tensors in PyTorch\'s segments'));
	parent.appendChild(el('p', { class: m.shown < m.total ? 'note' : 'hint' }, (m.shown < m.total ?
		'The largest ' + m.shown + ' of ' + m.total + ' tensor blocks are drawn' : 'All ' + m.total + ' tensor blocks are drawn') +
		', in ' + m.segments.length + ' segments (outlined: what the CUDA API sees; empty space in them is PyTorch\'s cache).'));
	var colour = {}, k = 0, legend = el('div', { class: 'maplegend' });
	f.fd.peak_allocated.map(function (h) { return h[0]; }).concat(m.blocks.map(function (b) { return b[6]; })).forEach(function (id) {
		if (colour[id] || k >= PALETTE.length) return;
		colour[id] = PALETTE[k++][0];
		var it = el('span', { class: 'item' });
		it.appendChild(el('span', { class: 'legend-box', style: 'background:' + colour[id] }));
		it.appendChild(document.createTextNode('tensor site ' + id + ': ' + fwSiteName(id)));
		legend.appendChild(it);
	});
	parent.appendChild(legend);
	var W = Math.max(400, Math.min(parent.clientWidth || 900, 1400) - 10), H = 320, L = 70, B = 24;
	var cv = el('canvas', { class: 'map fwmap', width: String(W * devicePixelRatio), height: String(H * devicePixelRatio),
		style: 'width:' + W + 'px;height:' + H + 'px', role: 'img',
		'aria-label': 'tensor address map of ' + dd.title + ': ' + m.shown + ' blocks in ' + m.segments.length + ' segments' });
	parent.appendChild(cv);
	var ymax = 1, tmax = R.duration_ns || 1, ctx = cv.getContext('2d');
	m.segments.concat(m.blocks).forEach(function (b) { if (b[3] > ymax) ymax = b[3]; });
	ctx.scale(devicePixelRatio, devicePixelRatio);
	function X(t) { return L + (W - L - 8) * t / tmax; }
	function Y(y) { return H - B - (H - B - 8) * y / ymax; }
	ctx.fillStyle = '#fff';
	ctx.fillRect(0, 0, W, H);
	m.segments.forEach(function (g) {
		ctx.fillStyle = '#f1f1f1';
		ctx.fillRect(X(g[0]), Y(g[3]), Math.max(1, X(g[1]) - X(g[0])), Math.max(1, Y(g[2]) - Y(g[3])));
		ctx.strokeStyle = '#777';
		ctx.lineWidth = 1;
		ctx.strokeRect(X(g[0]), Y(g[3]), Math.max(1, X(g[1]) - X(g[0])), Math.max(1, Y(g[2]) - Y(g[3])));
	});
	m.blocks.forEach(function (b) {
		var x0 = X(b[0]), x1 = X(b[1]), y0 = Y(b[3]), y1 = Y(b[2]);
		ctx.fillStyle = colour[b[6]] || C.other;
		ctx.fillRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
		if (x1 - x0 > 4 && y1 - y0 > 4) { ctx.strokeStyle = '#fff'; ctx.lineWidth = 0.5; ctx.strokeRect(x0, y0, x1 - x0, y1 - y0); }
	});
	var marks = oomMarks(i);
	marks.forEach(function (mk) {
		ctx.strokeStyle = mk.color;
		ctx.lineWidth = 1.5;
		ctx.beginPath();
		ctx.moveTo(X(mk.t), 8);
		ctx.lineTo(X(mk.t), H - B);
		ctx.stroke();
	});
	ctx.fillStyle = '#333';
	ctx.font = '11px sans-serif';
	ctx.fillText('0', L - 12, H - B + 4);
	ctx.fillText('0', L, H - 8);
	ctx.fillText(fmtNs(tmax), W - 60, H - 8);
	ctx.fillText('time →', (W - L) / 2, H - 8);
	function describe(b) {
		return fmtBytes(b[4]) + ' block (a tensor of ' + fmtBytes(b[9]) + ') at ' + b[8] + ' (pid ' + b[5] + ')\nallocated at ' +
			fmtAt(b[0]) + ', ' + (b[7] ? 'never freed' : 'freed at ' + fmtAt(b[1])) + '\ntensor site ' + b[6] + ': ' + fwSiteName(b[6]);
	}
	function at(e) {
		var r = cv.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
		for (var q = m.blocks.length - 1; q >= 0; q--) {
			var b = m.blocks[q];
			if (x >= X(b[0]) - 1 && x <= X(b[1]) + 1 && y >= Y(b[3]) - 1 && y <= Y(b[2]) + 1) return b;
		}
		return null;
	}
	hoverTip(cv, tip, at, describe);
	function open(b) { fwSiteDetails('Tensor block of ' + fmtBytes(b[4]), b[6], [{ text: describe(b) }]); }
	cv.addEventListener('click', function (e) { var b = at(e); if (b) open(b); });
	checks.push('fw_map ' + i + ' blocks ' + m.shown + ' segments ' + m.segments.length);
	active(parent, dd, i, colour, {
		map: m, boxes: m.blocks.map(function (b) { return [b[0], b[1], b[2], b[3], b[4], b[5], b[6], 0, b[8], b[9], b[7]]; }),
		peak: [f.rd.peak_allocated.allocated_bytes, src + '.peak_allocated.allocated_bytes'], marks: marks,
		describe: function (b) { return describe([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[10], b[8], b[9]]); },
		open: function (b) { open([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[10], b[8], b[9]]); } });
}

/* --- the page ----------------------------------------------------------- */

function summary() {
	var p = R.processes, names = p.map(function (x) { return basename((x.argv && x.argv[0]) || x.command); });
	$('run-title').textContent = names.length === 1 ? names[0] : names.length + ' processes';
	var sm = $('summary');
	var parts = [fmtNs(R.duration_ns) + ' traced', R.events.total + ' memory calls', R.devices.length + ' device' + (R.devices.length === 1 ? '' : 's')];
	sm.appendChild(document.createTextNode(parts.join(' · ')));
	if (RF) {
		/* in PyTorch's terms first, as the report's framework section */
		RF.devices.forEach(function (d, k) {
			if (d.pid !== null) return;
			var src = 'report.framework.devices.' + k;
			figLine($('summary-fw'), ['PyTorch, device ' + d.device + ': peak allocated ', [d.peak_allocated.allocated_bytes, src + '.peak_allocated.allocated_bytes'],
				' (tensor blocks), requested ', [d.peak_requested.requested_bytes, src + '.peak_requested.requested_bytes'],
				', cached ', [d.peak_allocated.cached_bytes, src + '.peak_allocated.cached_bytes'], ' then, peak reserved ',
				[d.peak_reserved.reserved_bytes, src + '.peak_reserved.reserved_bytes']], 'figs');
		});
		var nl = RF.leaks.length, no = RF.ooms.length;
		var v = {};
		RF.ooms.forEach(function (o) { v[o.verdict] = (v[o.verdict] || 0) + 1; });
		$('summary-fw').appendChild(el('p', null, nl + ' tensor leak candidate' + (nl === 1 ? '' : 's') + ' · ' + no +
			' out-of-memory error' + (no === 1 ? '' : 's') + (no ? ' (' + Object.keys(v).map(function (k) { return k; }).join(', ') + ')' : '')));
	}
	var cp = [];
	if (R.peak_all_devices) cp.push((RF ? 'CUDA API: ' : '') + 'peak over all devices ' + fmtBytes(R.peak_all_devices.reserved_bytes));
	cp.push((R.leaks || []).length + ' leak candidate' + ((R.leaks || []).length === 1 ? '' : 's') + (RF ? ' at the CUDA API' : ''));
	cp.push(R.failures_total + ' failed allocation' + (R.failures_total === 1 ? '' : 's'));
	var nw = 0;
	(D.processes || []).forEach(function (x) { nw += x.warnings.length; });
	if (nw) cp.push(nw + ' trace warning' + (nw === 1 ? '' : 's') + ' (see Processes)');
	sm.appendChild(document.createTextNode(' · ' + cp.join(' · ')));
}

function fragmentation() {
	var p = $('frag-table');
	(R.fragmentation || []).forEach(function (fr, j) {
		var src = 'report.fragmentation.' + j, di = -1;
		R.devices.forEach(function (d, i) { if (d.device === fr.device && di < 0) di = i; });
		figLine(p, [(di >= 0 ? D.devices[di].title : 'device ' + fr.device) + ': cached ',
			[fr.cached_share_at_peak, src + '.cached_share_at_peak', function (v) { return (100 * v).toFixed(0) + '%'; }],
			' of reserved at the peak, ', [fr.cached_share_mean, src + '.cached_share_mean', function (v) { return (100 * v).toFixed(0) + '%'; }],
			' on average over time'], 'figs');
		(fr.free_extents_at_peak || []).forEach(function (x, k) {
			var xs = src + '.free_extents_at_peak.' + k, parts = [];
			Object.keys(x).forEach(function (key) {
				if (typeof x[key] === 'number' && /bytes$/.test(key)) parts.push(key.replace(/_bytes$/, '').replace(/_/g, ' ') + ' ', [x[key], xs + '.' + key], '; ');
				else if (typeof x[key] !== 'object') parts.push(key.replace(/_/g, ' ') + ' ' + x[key] + '; ');
			});
			figLine(p, ['  '].concat(parts), 'figs');
		});
	});
	if (RF)
		p.appendChild(el('p', { class: 'hint' }, 'PyTorch\'s own: the inactive split and largest free block of each moment are in the timeline\'s header above and in each out-of-memory error.'));
}

[summary, timelines, units, peakSites, flame, leaks, failures, fragmentation, sitesTable, maps, processes, shm].forEach(function (f) {
	try { f(); } catch (e) { errors.push((f.name || 'part') + ': ' + e.message); }
});
/* page.html#selftest: works the controls as a person would, and writes
   what came of it into #memtrace-check (tests/t260-view-demo.sh) */
function selftest() {
	function at(e, fx) {
		var r = e.getBoundingClientRect();
		return { clientX: r.left + r.width * fx, clientY: r.top + r.height / 2, bubbles: true, cancelable: true };
	}
	var u = plots[0], end = R.duration_ns / 1e9, lo = 0, steps = [];
	/* uPlot applies a new scale in a microtask: one step per task */
	if (u)
		steps.push(function () {
			u.over.dispatchEvent(new WheelEvent('wheel', Object.assign({ deltaY: -100 }, at(u.over, 0.5))));
		}, function () {
			checks.push('selftest wheel_zoom ' + (u.scales.x.max - u.scales.x.min < end * 0.9 ? 1 : 0));
			lo = u.scales.x.min;
			u.over.dispatchEvent(new WheelEvent('wheel', Object.assign({ deltaY: 100, shiftKey: true }, at(u.over, 0.5))));
		}, function () {
			checks.push('selftest wheel_pan ' + (u.scales.x.min > lo ? 1 : 0));
			u.over.dispatchEvent(new MouseEvent('dblclick', at(u.over, 0.5)));
		}, function () {
			checks.push('selftest reset ' + (u.scales.x.min === 0 && u.scales.x.max === end ? 1 : 0));
			u.over.dispatchEvent(new MouseEvent('click', at(u.over, 0.5)));
			checks.push('selftest flame_at_click ' + (/^Live at /.test($('flame-note').textContent) ? 1 : 0));
		});
	steps.push(controls);
	/* a step's row: the timelines show that step */
	var srow = document.querySelectorAll('#units-body tbody tr')[RR && RR.steps.length ? RR.steps.length - 1 : 0];
	if (u && RR && RR.steps.length && srow)
		steps.push(function () {
			srow.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
		}, function () {
			var st = RR.steps[RR.steps.length - 1];
			checks.push('selftest step_zoom ' + (u.scales.x.min < st.start_ns / 1e9 && u.scales.x.min > 0 &&
				u.scales.x.max > st.end_ns / 1e9 && u.scales.x.max - u.scales.x.min < (st.end_ns - st.start_ns) / 1e9 * 1.2 ? 1 : 0) +
				' bands ' + u.units.bands);
		});
	/* the processes of device 0, stacked then one at a time */
	var sel = tlControls[0];
	if (sel)
		steps.push(function () {
			sel.value = 'stack';
			sel.dispatchEvent(new Event('change'));
		}, function () {
			var p = plots[0], top = 0;
			p.data[1].forEach(function (v) { if (v > top) top = v; });
			checks.push('selftest tl_stack areas ' + (p.series.length - 1) + ' top_max ' + top);
			sel.value = String(sel.options.length - 3);
			sel.dispatchEvent(new Event('change'));
		}, function () {
			var p = plots[0], top = 0;
			p.data[1].forEach(function (v) { if (v > top) top = v; });
			checks.push('selftest tl_one ' + sel.options[sel.selectedIndex].textContent + ' max ' + top);
			sel.value = 'sum';
			sel.dispatchEvent(new Event('change'));
		}, function () {
			checks.push('selftest tl_sum series ' + (plots[0].series.length - 1));
		});
	(function next() {
		try {
			steps.shift()();
		} catch (e) {
			errors.push('selftest: ' + e.message);
			steps = [];
		}
		if (steps.length)
			setTimeout(next, 0);
		else {
			checks.push('selftest done');
			writeCheck();
		}
	})();
}

function controls() {
	function at(e, fx) {
		var r = e.getBoundingClientRect();
		return { clientX: r.left + r.width * fx, clientY: r.top + r.height / 2, bubbles: true, cancelable: true };
	}
	var modes = ['peak', 'exit', 'leaks'].map(function (m) {
		var r = document.querySelector('input[name=flame-mode][value=' + m + ']');
		r.checked = true;
		r.dispatchEvent(new Event('change'));
		return m + ':' + document.querySelectorAll('#icicle .node').length;
	});
	checks.push('selftest flame_nodes ' + modes.join(' '));
	var node = document.querySelectorAll('#icicle .node')[1];
	if (node) {
		node.click();
		checks.push('selftest flame_zoom ' + (document.querySelector('#icicle .node').textContent.indexOf('all ') !== 0 ? 1 : 0));
	}
	var b = document.querySelectorAll('#sites-table th button')[2];
	b.click();
	var first = document.querySelector('#sites-table tbody tr td:nth-child(3)');
	checks.push('selftest sort_by_peak ' + (first ? first.textContent : '-'));
	var row = document.querySelector('#peak-sites tbody tr');
	if (row) {
		row.focus();
		row.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
		checks.push('selftest stack_frames ' + document.querySelectorAll('#details li').length +
			' hidden ' + $('details').hidden);
	}
	var cv = document.querySelector('canvas.map');
	if (cv) {
		var hit = 0;
		for (var k = 1; k < 20 && !hit; k++) {
			cv.dispatchEvent(new MouseEvent('mousemove', at(cv, k / 20)));
			hit = $('tip').hidden ? 0 : 1;
		}
		checks.push('selftest map_hover ' + hit);
		cv.focus();
		['ArrowRight', 'ArrowRight', 'ArrowRight', 'ArrowLeft'].forEach(function (key) {
			cv.dispatchEvent(new KeyboardEvent('keydown', { key: key, bubbles: true, cancelable: true }));
		});
		checks.push('selftest map_keys focused ' + (document.activeElement === cv ? 1 : 0) + ' selected ' +
			cv.dataset.selected + ' details ' + $('details-title').textContent);
	}
	var act = document.querySelector('canvas.active');
	if (act) {
		var ahit = 0;
		$('tip').hidden = true;
		for (var y = 0.1; y < 1 && !ahit; y += 0.1)
			for (k = 1; k < 20 && !ahit; k++) {
				var r = act.getBoundingClientRect();
				act.dispatchEvent(new MouseEvent('mousemove', { clientX: r.left + r.width * k / 20, clientY: r.top + r.height * y, bubbles: true }));
				ahit = $('tip').hidden ? 0 : 1;
			}
		checks.push('selftest active_hover ' + ahit + ' ' + $('tip').textContent.split('\n')[0]);
	}
}

checks.push('done 1');
checks.push('script_ms ' + Math.round(performance.now()));
writeCheck();
if (location.hash === '#selftest')
	setTimeout(selftest, 0);
/* the first frame painted with everything drawn (bench/view-bench.sh) */
requestAnimationFrame(function () {
	setTimeout(function () {
		try { labelCheck(); } catch (e) { errors.push('labels: ' + e.message); }
		checks.push('paint_ms ' + Math.round(performance.now()));
		writeCheck();
	}, 0);
});
})();
