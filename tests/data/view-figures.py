#!/usr/bin/env python3
"""view-figures.py PAGE DOM REPORT.json REPORT.txt: the figures of a page of
`memtrace view`, read from the DOM headless Chromium dumped, against the
report (tests/t261-view-figures.sh says what is checked). Prints one line
per figure and table row it checked; exits 1 at the first disagreement."""
import html, json, re, sys
from html.parser import HTMLParser

page, dom, rep, txt = (open(p, encoding="utf-8", errors="replace").read() for p in sys.argv[1:5])
rep = json.loads(rep)
data = json.loads(re.search(r'<script type="application/json" id="memtrace-data">(.*?)</script>', page, re.S).group(1))
assert data["report"] == rep, "the page's report differs from memtrace report --json"
# the page's own unit figures are the report's JSON's, worked out as
# docs/view.md says: a step's growth is its reserved at its end - at its
# start, a test's leak what it held more at its end (0 when less; of the
# framework's allocated with framework records)
if "units" in data:
    rr, u = rep["ranges"], data["units"]
    assert [x["growth_bytes"] for x in u["steps"][:len(rr["steps"])]] == \
        [s["reserved_at_end"] - s["reserved_at_start"] for s in rr["steps"]], "units.steps differ from report.ranges.steps"
    fw = lambda t: "framework_allocated_at_end" in t
    assert [x["leaked_bytes"] for x in u["tests"][:len(rr["tests"])]] == \
        [max(0, (t["framework_allocated_at_end"] - t["framework_allocated_at_start"]) if fw(t) else
             (t["reserved_at_end"] - t["reserved_at_start"])) for t in rr["tests"]], "units.tests differ from report.ranges.tests"
    assert u["instances_logged"] + u["instances_left_out"] == rr["instances"], "the page's log does not add up to the report's instances"


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.kids = tag, dict(attrs), parent, []

    def text(self):
        return "".join(k if isinstance(k, str) else k.text() for k in self.kids)

    def cls(self):
        return (self.attrs.get("class") or "").split()

    def all(self, pred):
        out = []
        for k in self.kids:
            if isinstance(k, Node):
                if pred(k):
                    out.append(k)
                out += k.all(pred)
        return out


VOID = {"br", "img", "input", "meta", "link", "hr", "col", "area", "base", "wbr", "source"}


class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#root", [], None)

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.kids.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, d):
        self.cur.kids.append(d)


p = P()
p.feed(dom)
root = p.root


def by_id(i):
    r = root.all(lambda n: n.attrs.get("id") == i)
    return r[0] if r else None


check = by_id("memtrace-check").text().splitlines()
assert "errors 0" in check, "script errors: %s" % check
assert "done 1" in check, check
for line in check:
    m = re.match(r"^(.*) labels (\d+) overlaps (\d+)$", line)
    assert not m or m.group(3) == "0", "labels overlap: " + line


def fixed(v, d):
    return "%.*f" % (d, v)      # C's printf, as rep_size


def size(b):
    if b < 0:
        return "-" + size(-b)
    if b < 1024:
        return "%d B" % b
    v, u = float(b), -1
    while v >= 1024 and u < 5:
        v /= 1024
        u += 1
    unit = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"][u]
    return (fixed(v, 2) if v < 10 else fixed(v, 1) if v < 100 else fixed(v, 0)) + " " + unit


def duration(ns):
    if ns < 1e6:
        return fixed(ns / 1e3, 1) + " us"
    if ns < 1e9:
        return fixed(ns / 1e6, 1) + " ms"
    return fixed(ns / 1e9, 3) + " s"


def resolve(path):
    v = data
    for k in path.split("."):
        v = v[int(k)] if isinstance(v, list) else v[k]
    return v


figs = root.all(lambda n: "fig" in n.cls())
for f in figs:
    src, dv, text = f.attrs["data-src"], f.attrs["data-v"], f.text()
    v = resolve(src)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        assert float(dv) == float(v), "%s: the page shows %s, the data holds %s" % (src, dv, v)
    else:
        assert dv == str(v), "%s: the page shows %r, the data holds %r" % (src, dv, v)
    last = src.split(".")[-1]
    # the ranges' figures (report.ranges, units): names without "bytes"
    unit = src.startswith(("report.ranges.", "units.")) and not last.endswith("time_ns")
    if unit and last in ("start_ns", "end_ns"):
        want = "+" + duration(v)
    elif unit and last == "total_ns":
        want = duration(v)
    elif unit and (last.startswith(("peak_", "reserved_", "framework_", "first_step_")) or last.endswith("_per_step")
                   or ".categories." in src):
        want = size(v)
    elif last.endswith("time_ns"):
        want = "+" + duration(v)
    elif "bytes" in last or (re.search(r"\.peak_(allocated|requested|reserved)\.\d+\.1$", src)
                                     and src.startswith("framework.")):
        want = size(v) if not (last == "untraced_bytes_at_peak" and v < 0) else size(-v)
    elif last.startswith("cached_share"):
        want = "%.0f%%" % (100 * v)
    else:
        want = str(v)
    assert text == want, "%s = %r is shown as %r, the report writes %r" % (src, v, text, want)
    print("fig %s %s %s" % (src, dv, text))
assert figs, "no figure tagged on the page"

SIZE = re.compile(r"\b\d+(\.\d+)? (B|KiB|MiB|GiB|TiB)\b")
for td in root.all(lambda n: n.tag == "td" and "num" in n.cls()):
    assert not SIZE.search(td.text()) or "fig" in td.cls(), \
        "a size in a table that is no figure of the data (computed by the page?): %r" % td.text()


def tables(section):
    s = by_id(section)
    for t in (s.all(lambda n: n.tag == "table") if s else []):
        head = [th.text() for th in t.all(lambda n: n.tag == "th")]
        rows = [[td.text() for td in tr.all(lambda n: n.tag == "td")]
                for tr in t.all(lambda n: n.tag == "tr") if tr.parent.tag == "tbody"]
        yield head, rows


def has(line, what):
    assert line in txt, "%s: %r is not a line of the text report" % (what, line)


def plural(n, w):
    return w + ("s" if n != 1 else " ")


for head, rows in list(tables("peak-sites")) + list(tables("leaks-table")) + list(tables("failures-table")):
    for r in rows:
        if head[0] == "held at peak":            # CUDA level: bytes, allocs, procs, site, where
            w = r[4].replace("  [caching allocator]", "")
            extra = ("  [%s processes]" % r[2] if int(r[2]) > 1 else "") + \
                ("  [caching allocator]" if r[4].endswith("[caching allocator]") else "")
            has("%10s  %5s %s  %s%s\n" % (r[0], r[1], plural(int(r[1]), "alloc"), w, extra), "peak site")
            print("peak_site %s %s %s" % (r[0], r[1], r[4]))
        elif head[0].startswith("held at the peak of"):  # tensors: bytes, tensors, site, where
            has("    %10s  %5s %s  %s\n" % (r[0], r[1], plural(int(r[1]), "tensor"), r[3]), "tensor peak site")
            print("tensor_site %s %s %s" % (r[0], r[1], r[3]))
        elif head[:2] == ["left at exit", "tensors"]:     # tensor leak candidates
            has("%10s  %5s %s  %s\n" % (r[0], r[1], plural(int(r[1]), "tensor"), r[6]), "tensor leak")
            print("tensor_leak %s %s %s" % (r[0], r[1], r[6]))
        elif head[:2] == ["left at exit", "allocations"]:  # CUDA leak candidates
            has("%10s  %5s %s  %s\n" % (r[0], r[1], plural(int(r[1]), "alloc"), r[5]), "leak")
            print("leak %s %s %s" % (r[0], r[1], r[5]))
        elif head[:2] == ["top holders", "tensors"]:       # an OOM's holders
            has("%10s  %5s %s  %s\n" % (r[0], r[1], plural(int(r[1]), "tensor"), r[3]), "OOM holder")
            print("oom_holder %s %s %s" % (r[0], r[1], r[3]))
        elif head[0] == "time":                          # CUDA failures
            has("      at %s\n" % r[7], "failed call")
            for h in r[6].split("\n"):
                if h:
                    b, n = h.split("  ", 1)
                    has("%10s  %s\n" % (b, n), "failure holder")
            print("failure %s %s" % (r[0], r[7]))
# the names of every site on the page are the report's
for s in data["sites"]:
    assert s["name"] and "name" in s
for line in check:
    print(line)
