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
var C = { reserved: '#0072B2', allocated: '#E69F00', cached: '#56B4E9', used: '#000000',
	peak: '#CC79A7', failure: '#D55E00', other: '#BBBBBB' };

var D = JSON.parse(document.getElementById('memtrace-data').textContent);
var R = D.report;
var siteById = {};
D.sites.forEach(function (s) { siteById[s.site] = s; });

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

/* Sizes as the text report writes them: binary units. */
function fmtBytes(b) {
	if (b === null || b === undefined)
		return '';
	var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0, v = Math.abs(b);
	while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
	var s = i === 0 ? String(v) : (v >= 100 ? v.toFixed(0) : v.toFixed(1));
	return (b < 0 ? '-' : '') + s + ' ' + u[i];
}
function fmtNs(ns) {
	if (ns === null || ns === undefined)
		return '';
	if (ns < 1e3) return ns + ' ns';
	if (ns < 1e6) return (ns / 1e3).toFixed(1) + ' us';
	if (ns < 1e9) return (ns / 1e6).toFixed(1) + ' ms';
	return (ns / 1e9).toFixed(3) + ' s';
}
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
	if (f.function)
		return f.function + ' (' + (f.file ? basename(f.file) : '?') + ':' + f.line + ')';
	return basename(f.module) + '+' + f.offset;
}
function frameFull(f) {
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

/* cols: {label, get(row), fmt(v), num}; rows selectable when onSelect. */
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
				var v = c.get(r);
				row.appendChild(el('td', { class: c.num ? 'num' : (c.where ? 'where' : '') },
					c.fmt ? c.fmt(v, r) : v));
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
	parent.appendChild(el('h3', null, title));
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

function chart(box, width, tl, samples, marks, opts) {
	var stack = opts.stack ? stackRows(opts.tl, opts.stack) : null;
	if (stack) tl = { t: stack.t, reserved: stack.cols[stack.cols.length - 1], allocated: stack.cols[0] };
	var t = tl.t, res = tl.reserved, alloc = tl.allocated;
	var cached = res.map(function (r, i) { return r - alloc[i]; });
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
		var d = thin(t, [res, alloc, cached], a, b, width);
		/* the last row holds to the end of the run */
		if (b === t.length && end > d[0][d[0].length - 1]) {
			d[0].push(end);
			for (var k = 1; k < 4; k++) d[k].push(d[k][d[k].length - 1]);
		}
		if (!hasSamples)
			return d;
		d.push(d[0].map(function () { return null; }));
		{
			/* merge the samples in: a point each, the timeline held there */
			var x = [], s = [[], [], []], used = [], p = 0;
			var st = samples.t.map(function (v) { return v / 1e9; });
			for (var i = 0; i <= d[0].length; i++) {
				while (p < st.length && (i === d[0].length || st[p] < d[0][i])) {
					if (st[p] >= lo && st[p] <= hi && i > 0) {
						x.push(st[p]);
						for (var k2 = 0; k2 < 3; k2++) s[k2].push(d[k2 + 1][i - 1]);
						used.push(samples.used[p]);
					}
					p++;
				}
				if (i === d[0].length) break;
				x.push(d[0][i]);
				for (k2 = 0; k2 < 3; k2++) s[k2].push(d[k2 + 1][i]);
				used.push(null);
			}
			d = [x, s[0], s[1], s[2], used];
		}
		return d;
	}
	var stepped = uPlot.paths.stepped({ align: 1 });
	var bytesVal = function (u, v) { return v === null || v === undefined ? '-' : fmtBytes(v); };
	var series = [{ label: 'time', value: function (u, v) { return fmtSec(v); } },
		{ label: opts.names[0], stroke: C.reserved, width: 2, paths: stepped, value: bytesVal, points: { show: false } },
		{ label: opts.names[1], stroke: C.allocated, width: 1.5, paths: stepped, value: bytesVal, points: { show: false } },
		{ label: opts.names[2], stroke: C.cached, width: 1, dash: [4, 3], paths: stepped, value: bytesVal, points: { show: false } },
		{ label: usedLabel, show: !usedHidden, stroke: C.used, width: 0, paths: function () { return null; },
			points: { show: true, size: 6, fill: C.used }, value: bytesVal }].slice(0, hasSamples ? 5 : 4);
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
		var ctx = u.ctx;
		ctx.save();
		marks.forEach(function (m) {
			var x = u.valToPos(m.t / 1e9, 'x', true);
			if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
			ctx.strokeStyle = m.color;
			ctx.lineWidth = 1.5 * devicePixelRatio;
			ctx.setLineDash(m.dash ? [6 * devicePixelRatio, 4 * devicePixelRatio] : []);
			ctx.beginPath();
			ctx.moveTo(x, u.bbox.top);
			ctx.lineTo(x, u.bbox.top + u.bbox.height);
			ctx.stroke();
			if (m.label) {
				ctx.fillStyle = m.color;
				ctx.font = (12 * devicePixelRatio) + 'px sans-serif';
				ctx.fillText(m.label, x + 4 * devicePixelRatio, u.bbox.top + 14 * devicePixelRatio * (m.row || 1));
			}
		});
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

var timelineMax = [], plots = [], tlControls = [];
function timelines() {
	var parent = $('tl');
	D.devices.forEach(function (dd, i) {
		var dv = R.devices[i];
		var marks = [];
		if (dv.peak_reserved_bytes)
			marks.push({ t: dv.peak_reserved_time_ns, color: C.peak, dash: true,
				label: 'peak ' + fmtBytes(dv.peak_reserved_bytes) });
		failuresOf(i).forEach(function (f, k) {
			marks.push({ t: f.time_ns, color: C.failure, label: k ? null : 'failed: ' + fmtBytes(f.requested_bytes), row: 2 });
		});
		var title = dd.title + ': peak ' + fmtBytes(dv.peak_reserved_bytes) + ' reserved at ' +
			fmtNs(dv.peak_reserved_time_ns) + ', ' + fmtBytes(dv.peak_allocated_bytes) + ' allocated';
		var procs = (dd.processes || []).map(function (p) {
			var rp = R.processes.filter(function (q) { return q.pid === p.pid; })[0];
			return { label: 'pid ' + p.pid + (rp && rp.rank >= 0 ? ' (rank ' + rp.rank + ')' : ''),
				timeline: p.timeline, after_end: p.after_end };
		});
		var hold = timeline(parent, title, dd.timeline, dd.samples, marks,
			{ duration: R.duration_ns, names: ['reserved', 'allocated', 'cached'], dev: i, procs: procs,
				onChange: function (u) { plots[i] = u; } });
		plots.push(hold.u);
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
	(D.framework || []).forEach(function (fw) {
		timeline(parent, 'The framework\'s allocator (tensors), device ' + fw.device, fw, null, [],
			{ duration: R.duration_ns, names: ['tensor reserved', 'tensor allocated', 'tensor cached'] });
	});
	checks.push('devices ' + D.devices.length);
}

/* --- peak sites --------------------------------------------------------- */

function siteDetails(title, s, frames, hidden, extra) {
	var parts = extra ? extra.slice() : [];
	parts.push({ frames: frames, hidden: hidden, label: 'stack (innermost first)' });
	showDetails(title + (s ? ' (site ' + s + ')' : ''), parts);
}

function peakSites() {
	var parent = $('peak-sites'), shown = 0;
	R.devices.forEach(function (dv, i) {
		parent.appendChild(el('h3', null, D.devices[i].title + ': ' + fmtBytes(dv.peak_reserved_bytes) +
			' reserved at ' + fmtNs(dv.peak_reserved_time_ns)));
		if (dv.peak_set_by)
			parent.appendChild(el('p', null, 'The peak was reached by ' + dv.peak_set_by.api + ' of ' +
				fmtBytes(dv.peak_set_by.bytes) + ' (pid ' + dv.peak_set_by.pid + ') at ' +
				where(dv.peak_set_by.frames) + '.'));
		if (dv.untraced_bytes_at_peak)
			parent.appendChild(el('p', { class: 'hint' }, 'The device used ' + fmtBytes(dv.device_used_bytes_at_peak) +
				' then; ' + fmtBytes(dv.untraced_bytes_at_peak) + ' of it not allocated through the traced calls (context, other processes).'));
		var rows = dv.peak_sites || [];
		var n = D.devices[i].peak_sites.length;
		shown += table(parent, [
			{ label: 'held at peak', num: 1, get: function (r) { return r.bytes; }, fmt: fmtBytes },
			{ label: 'share', num: 1, get: function (r) { return dv.peak_reserved_bytes ? r.bytes / dv.peak_reserved_bytes : 0; },
				fmt: function (v) { return (100 * v).toFixed(1) + '%'; } },
			{ label: 'allocations', num: 1, get: function (r) { return r.count; } },
			{ label: 'processes', num: 1, get: function (r) { return r.processes; } },
			{ label: 'site', num: 1, get: function (r) { return r.site; } },
			{ label: 'where', where: 1, get: function (r) { return where(r.frames) + (r.caching_allocator ? '  [caching allocator]' : ''); } }
		], rows, function (r) {
			siteDetails(fmtBytes(r.bytes) + ' at the peak', r.site, r.frames, r.hidden_frames);
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
	R.devices.forEach(function (dv, i) { sel.appendChild(el('option', { value: String(i) }, D.devices[i].title)); });
	var at = null;
	if (!R.devices.length) {
		$('flame-note').textContent = 'No device memory in this run.';
		return;
	}
	function render() {
		var i = +sel.value || 0, dv = R.devices[i], mode = document.querySelector('input[name=flame-mode]:checked').value;
		var items = [], note = '';
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
	var rows = R.leaks || [];
	if (!rows.length)
		$('leaks-table').appendChild(el('p', null, 'No leak candidate: nothing was left live at exit, and no site kept growing.'));
	else
		table($('leaks-table'), [
			{ label: 'left at exit', num: 1, get: function (r) { return r.bytes; }, fmt: fmtBytes },
			{ label: 'allocations', num: 1, get: function (r) { return r.count; } },
			{ label: 'why', get: function (r) { return (r.reasons || []).join(', ').replace(/_/g, ' '); } },
			{ label: 'device', num: 1, get: function (r) { return r.device; } },
			{ label: 'site', num: 1, get: function (r) { return r.site; } },
			{ label: 'where', where: 1, get: function (r) { return where(r.frames); } }
		], rows, function (r) {
			siteDetails('Leak candidate: ' + fmtBytes(r.bytes) + ' left at exit', r.site, r.frames, r.hidden_frames);
		}, true);
	checks.push('leaks ' + rows.length);
}

function failures() {
	var rows = R.failures || [], p = $('failures-table');
	if (!rows.length)
		p.appendChild(el('p', null, 'No allocation failed.'));
	else
		table(p, [
			{ label: 'time', num: 1, get: function (r) { return r.time_ns; }, fmt: fmtNs },
			{ label: 'pid', num: 1, get: function (r) { return r.pid; } },
			{ label: 'call', get: function (r) { return r.api + ' of ' + fmtBytes(r.requested_bytes) + ' on device ' + r.device; } },
			{ label: 'error', get: function (r) { return r.error_name || String(r.error); } },
			{ label: 'reserved then', num: 1, get: function (r) { return r.reserved_bytes; }, fmt: fmtBytes },
			{ label: 'device free', num: 1, get: function (r) { return r.device_free_bytes; }, fmt: fmtBytes },
			{ label: 'held by', where: 1, get: function (r) {
				return (r.top_holders || []).map(function (h) { return fmtBytes(h.bytes) + ' at ' + where(h.frames); }).join('; ');
			} },
			{ label: 'where', where: 1, get: function (r) { return where(r.frames); } }
		], rows, function (r) {
			var parts = [{ text: r.api + ' of ' + fmtBytes(r.requested_bytes) + ' failed with ' + (r.error_name || r.error) +
				' at ' + fmtNs(r.time_ns) + ' (pid ' + r.pid + ', thread ' + r.tid + '); the process held ' +
				fmtBytes(r.reserved_bytes) + ' on device ' + r.device + '.' }, { frames: r.frames, hidden: r.hidden_frames, label: 'the failed call' }];
			(r.top_holders || []).forEach(function (h, k) {
				parts.push({ frames: h.frames, hidden: h.hidden_frames, label: 'holder ' + (k + 1) + ': ' + fmtBytes(h.bytes) + ' in ' + h.count + ' allocations' });
			});
			showDetails('Failed allocation', parts);
		}, true);
	if (R.failures_total > rows.length)
		p.appendChild(el('p', { class: 'note' }, rows.length + ' of ' + R.failures_total + ' failures listed.'));
	checks.push('failures ' + rows.length);
}

function sitesTable() {
	var peakOf = {};
	D.devices.forEach(function (d) { d.peak_sites.forEach(function (p) { peakOf[p.site] = (peakOf[p.site] || 0) + p.bytes; }); });
	var n = table($('sites-table'), [
		{ label: 'site', num: 1, get: function (s) { return s.site; } },
		{ label: 'device', num: 1, get: function (s) { return s.device; }, fmt: function (v) { return v < 0 ? 'pinned host' : v; } },
		{ label: 'at the peak', num: 1, get: function (s) { return peakOf[s.site] || 0; }, fmt: fmtBytes },
		{ label: 'allocations', num: 1, get: function (s) { return s.allocations; } },
		{ label: 'allocated in all', num: 1, get: function (s) { return s.allocated_bytes; }, fmt: fmtBytes },
		{ label: 'live at exit', num: 1, get: function (s) { return s.live_at_exit_bytes; }, fmt: fmtBytes },
		{ label: 'processes', num: 1, get: function (s) { return s.processes; } },
		{ label: 'where', where: 1, get: function (s) { return where(s.frames) + (s.caching_allocator ? '  [caching allocator]' : ''); } }
	], D.sites, function (s) {
		siteDetails('Site', s.site, s.frames, 0, [{ text: s.allocations + ' allocations, ' + fmtBytes(s.allocated_bytes) +
			' in all; ' + fmtBytes(s.live_at_exit_bytes) + ' live at exit.' }]);
	}, true);
	checks.push('sites ' + n);
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
		{ label: 'peak reserved', num: 1, get: function (p) { return p.peak_reserved_bytes; }, fmt: fmtBytes },
		{ label: 'events', num: 1, get: function (p) { return p.events; } },
		{ label: 'failed', num: 1, get: function (p) { return p.failed; } }
	], R.processes, function (p) {
		showDetails('Process ' + p.pid, [{ text: 'executable: ' + p.exe }, { text: 'trace: ' + p.trace },
			{ text: 'host: ' + p.hostname }]);
	}, true);
	checks.push('processes ' + n);
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
				get: function (r) { return r[k]; }, fmt: /bytes$/.test(k) ? fmtBytes : null };
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
		var m = dd.address_map;
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
			it.appendChild(document.createTextNode(p.site ? 'site ' + p.site + (s ? ': ' + where(s.frames) : '') :
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
					'still live at the end') : 'freed at ' + fmtNs(b[1])) + '\n' + (s ? where(s.frames) + ' (site ' + b[6] + ')' : 'no site of its own (a mapping)');
		}
		cv.addEventListener('mousemove', function (e) {
			var b = at(e);
			if (!b) { tip.hidden = true; return; }
			tip.textContent = describe(b);
			tip.style.left = (e.clientX + 12) + 'px';
			tip.style.top = (e.clientY + 12) + 'px';
			tip.hidden = false;
		});
		cv.addEventListener('mouseleave', function () { tip.hidden = true; });
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

function active(parent, dd, i, colour) {
	var m = dd.address_map, tip = $('tip'), tmax = R.duration_ns || 1;
	/* what a process left live went back to the device when it ended
	   (its own timeline ends at 0): its bands end there, not at the run's end */
	var gone = goneOf(dd);
	var boxes = m.boxes, lay = activeLayout(boxes, tmax, gone), note = '';
	if (!lay) {
		boxes = m.boxes.slice().sort(function (a, b) { return b[4] - a[4]; }).slice(0, ACTIVE_FALLBACK);
		lay = activeLayout(boxes, tmax, gone);
		note = 'Too many moves to draw: the largest ' + boxes.length + ' allocations are stacked. ';
	}
	parent.appendChild(el('h4', null, 'Active memory: ' + dd.title));
	if (m.shown < m.total) note += 'Only the address map\'s largest ' + m.shown + ' of ' + m.total + ' allocations are stacked.';
	parent.appendChild(el('p', { class: note ? 'note' : 'hint' }, note ||
		'Every live allocation stacked, oldest at the bottom: a band runs from its allocation to its free.'));
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
	ctx.fillText(fmtBytes(lay.max), 2, 14);
	ctx.fillText('0', L, H - 8);
	ctx.fillText(fmtNs(tmax), W - 60, H - 8);
	ctx.fillText('time →', (W - L) / 2, H - 8);
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
		var s = siteById[b[6]];
		var end = b[7] ? (gone[b[5]] !== undefined ? gone[b[5]] : tmax) : b[1];
		return fmtBytes(b[4]) + ' (pid ' + b[5] + ', ' + b[8] + ')\nlive ' + fmtNs(end - b[0]) + ': from ' + fmtNs(b[0]) +
			(b[7] ? ' to ' + (gone[b[5]] !== undefined ? 'its process\'s end at ' + fmtNs(end) : 'the end') + ' (never freed)' :
				' to ' + fmtNs(b[1])) + '\n' +
			(s ? 'site ' + b[6] + ':\n' + s.frames.slice(0, 12).map(frameText).join('\n') : 'no site of its own (a mapping)');
	}
	cv.addEventListener('mousemove', function (e) {
		var b = at(e);
		if (!b) { tip.hidden = true; return; }
		tip.textContent = describe(b);
		tip.style.left = (e.clientX + 12) + 'px';
		tip.style.top = (e.clientY + 12) + 'px';
		tip.hidden = false;
	});
	cv.addEventListener('mouseleave', function () { tip.hidden = true; });
	cv.addEventListener('click', function (e) {
		var b = at(e), s = b && siteById[b[6]];
		if (b) siteDetails('Allocation of ' + fmtBytes(b[4]), b[6], s ? s.frames : [], 0, [{ text: describe(b) }]);
	});
	checks.push('active ' + i + ' bands ' + boxes.length + ' max ' + lay.max);
}

/* --- the page ----------------------------------------------------------- */

function summary() {
	var p = R.processes, names = p.map(function (x) { return basename((x.argv && x.argv[0]) || x.command); });
	$('run-title').textContent = names.length === 1 ? names[0] : names.length + ' processes';
	var parts = [fmtNs(R.duration_ns) + ' traced', R.events.total + ' memory calls', R.devices.length + ' device' + (R.devices.length === 1 ? '' : 's')];
	if (R.peak_all_devices) parts.push('peak over all devices ' + fmtBytes(R.peak_all_devices.reserved_bytes));
	parts.push((R.leaks || []).length + ' leak candidate' + ((R.leaks || []).length === 1 ? '' : 's'));
	parts.push(R.failures_total + ' failed allocation' + (R.failures_total === 1 ? '' : 's'));
	$('summary').textContent = parts.join(' · ');
}

[summary, timelines, peakSites, flame, leaks, failures, sitesTable, maps, processes, shm].forEach(function (f) {
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
		checks.push('paint_ms ' + Math.round(performance.now()));
		writeCheck();
	}, 0);
});
})();
