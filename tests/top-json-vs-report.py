#!/usr/bin/env python3
"""tests/top-json-vs-report.py TOP_JSON REPORT_JSON REPORT_TEXT [METRICS]:
checks `memtrace top --once --json` of finished traces against `memtrace
report --json` (and its text) of the same traces, field by field: each
device's peak and reserved at the end; each process's reserved (its left at
exit) and peak per device; the sites live at the end (the report's leak
candidates left at exit and the caching allocator's segments) by site id,
bytes and count, their names as the text report prints them; the
framework's allocated, requested, reserved, cached and awaiting at the end
(the report's at_exit) and its peaks, per device of the run and of each
process; the tensor sites live at the end (the report's exit_bytes), with
their peak, file, line, function, and their name as the text report prints
it. With METRICS (a Prometheus text file of the same frame), its
memtrace_torch_* series carry the same numbers. Prints one line per
difference; exit 1 if any."""
import json, re, sys

top = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
text = open(sys.argv[3]).read()
bad = []


def same(what, got, want):
    if got != want:
        bad.append("%s: top %r, report %r" % (what, got, want))


# --- CUDA level ----------------------------------------------------------
tdev = {(d["hostname"], d["device"]): d for d in top["devices"]}
same("devices", sorted(tdev), sorted((d["hostname"], d["device"]) for d in rep["devices"]))
for d in rep["devices"]:
    t = tdev.get((d["hostname"], d["device"]))
    if t:
        same("device %d peak" % d["device"], t["peak_reserved_bytes"], d["peak_reserved_bytes"])
        same("device %d reserved at the end" % d["device"], t["reserved_bytes"], d["live_at_end_bytes"])
tproc = {p["pid"]: p for p in top["processes"]}
same("processes", sorted(tproc), sorted(p["pid"] for p in rep["processes"]))
for p in rep["processes"]:
    t = tproc.get(p["pid"])
    if not t:
        continue
    td = {d["device"]: d for d in t["devices"]}
    for d in p["devices"]:
        x = td.get(d["device"], {})
        same("pid %d device %d reserved" % (p["pid"], d["device"]), x.get("reserved_bytes"),
             d["left_at_exit_bytes"])
        same("pid %d device %d peak" % (p["pid"], d["device"]), x.get("peak_reserved_bytes"),
             d["peak_reserved_bytes"])
want = {}
for l in rep["leaks"] + rep["cache_at_exit"]:
    if l.get("bytes"):
        k = (l["site"], l["device"])
        want[k] = (want.get(k, (0, 0))[0] + l["bytes"], want.get(k, (0, 0))[1] + l["count"])
got = {(s["site"], -1 if s["device"] == "host" else s["device"]): (s["live_bytes"], s["count"])
       for s in top["sites"] if s["live_bytes"]}
same("sites live at the end (site, device): (bytes, count)", got, want)
for s in top["sites"]:
    if s["live_bytes"] and s["name"] not in text:
        bad.append("site %d: name %r not in the text report" % (s["site"], s["name"]))

# --- the framework ---------------------------------------------------------
f = rep.get("framework")
tf = top.get("framework")
if f is None or tf is None:
    same("framework", tf is None, f is None)
else:
    same("framework events", tf["events"], f["events"])
    tfd = {(d["device"], d["pid"]): d for d in tf["devices"]}
    same("framework devices", sorted(tfd, key=str), sorted(((d["device"], d["pid"]) for d in f["devices"]), key=str))
    for d in f["devices"]:
        t = tfd.get((d["device"], d["pid"]))
        if not t:
            continue
        w = "framework device %d pid %s" % (d["device"], d["pid"])
        e = d["at_exit"]
        for k in ("reserved_bytes", "allocated_bytes", "requested_bytes", "cached_bytes",
                  "awaiting_free_bytes"):
            same("%s %s at the end" % (w, k), t[k], e[k])
        same(w + " peak allocated", t["peak_allocated_bytes"], d["peak_allocated"]["allocated_bytes"])
        same(w + " peak requested", t["peak_requested_bytes"], d["peak_requested"]["requested_bytes"])
        same(w + " peak reserved", t["peak_reserved_bytes"], d["peak_reserved"]["reserved_bytes"])
        same(w + " ooms", t["ooms"], d["ooms"])
    want = {s["site"]: (s["device"], s["exit_bytes"], s["peak_bytes"], s["file"], s["line"], s["function"])
            for s in f["sites"] if s["exit_bytes"]}
    got = {s["site"]: (s["device"], s["live_bytes"], s["peak_bytes"], s["file"], s["line"], s["function"])
           for s in tf["sites"]}
    same("tensor sites live at the end", got, want)
    for s in tf["sites"]:
        if not re.search(r"\s" + re.escape(s["name"]) + r"\s*$", text, re.M):
            bad.append("tensor site %d: name %r not a line of the text report" % (s["site"], s["name"]))
    if len(sys.argv) > 4:
        series = {}
        for line in open(sys.argv[4]):
            m = re.match(r'^(memtrace_torch_\w+)\{(.*)\} (\d+)$', line)
            if m:
                labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
                series[(m.group(1), labels.get("device"), labels.get("pid"), labels.get("site_id"))] = int(m.group(3))
        for d in tf["devices"]:
            pre = "memtrace_torch_" if d["pid"] is not None else "memtrace_torch_device_"
            pid = str(d["pid"]) if d["pid"] is not None else None
            for k, v in (("reserved_bytes", d["reserved_bytes"]), ("allocated_bytes", d["allocated_bytes"]),
                         ("requested_bytes", d["requested_bytes"]), ("cached_bytes", d["cached_bytes"]),
                         ("peak_allocated_bytes", d["peak_allocated_bytes"]),
                         ("peak_reserved_bytes", d["peak_reserved_bytes"])):
                same("metrics %s%s device %d pid %s" % (pre, k, d["device"], pid),
                     series.get((pre + k, str(d["device"]), pid, None)), v)
        for s in tf["sites"][:10]:
            same("metrics memtrace_torch_site_live_bytes site_id %d" % s["site"],
                 series.get(("memtrace_torch_site_live_bytes", str(s["device"]), None, str(s["site"]))),
                 s["live_bytes"])
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
