#!/usr/bin/env python3
"""fuzz2.py - the format-2 mutation fuzzer: damaged traces through every
command that reads one, with a check of what each must say.

  fuzz2.py --memtrace BIN --work DIR [--seed N] [--seconds S] [--mutants N]
           [--jobs J] SEED.bin...

Each SEED is a real format-2 trace (several threads, slabs reused by
short threads (MT_REC_OWNER), framework records, ...: tests/t413 makes
them with the test clients). Mutant i of a run is made by a random.Random
seeded with (N, i) alone, so a failure is replayed by its number whatever
ran before or beside it; the first `--mutants` (or as many as `--seconds`
allow) are run, J at a time. Every mutant goes through report (text),
report --json, dump, check, view, export (perfetto, collapsed,
torch-snapshot), top --once and top --once --dir (the live follower of
analyze/live/follow.c alone), each under a 20 s limit.

What is checked (a failure prints one line and keeps the mutant in DIR):

 every command, every mutant
   - it ends by itself (no hang), not by a signal, with status 0, 1 or 2,
     and prints no sanitizer report (runtime error, AddressSanitizer);
   - a refusal (report, dump, view or export exiting non-zero) is one
     line on stderr;
 the readers agree (report, report --json, view and export load traces
 through the same pipeline; dump through the same reader):
   - report, report --json, view and every export accept or refuse it
     together, and warn together (the same warning lines on stderr);
   - dump refuses only what report refuses too;
 the gate never passes on what was said to be damaged:
   - when report refuses the trace or warns about it (a warning of the
     reader on stderr), check does not pass (exit 0);
 damage that the format lets a reader see is said:
   - cut: the file cut inside a slab (not on a slab boundary) is warned
     or refused;
   - ignored: bytes only the format ignores changed (the padding after the
     64-byte header, the header's reserved bytes, the body of a slab that
     was never claimed (no slab magic), the bytes after the end of a
     slab's records): the report, its JSON and the dump are those of the
     seed, unless a warning (a torn record, say) or a refusal says why not;
   - dup: a claimed slab copied over an unclaimed one or appended: the
     same report as the seed's, or a warning (dup-fw: the same, of a slab
     holding framework records);
   - swap: two claimed slabs exchanged: the same report as the seed's, or
     a warning.
 Not checked, because no reader can tell them from an undamaged trace
 (format 2 has no checksums, and a clean end says nothing of the slab
 count): a byte changed inside a record (it may make another valid
 record: flip), a slab's magic zeroed (it reads as a slab never claimed:
 zero), the file cut on a slab boundary (cut-slab). Those still get every
 check of the first two groups.
 the live follower says what the reader says (issue 25 row 1):
   - top --once on the trace refuses what report refuses;
   - top --once --dir (the follower alone, which validates the records as
     they are read) on a trace report refuses either shows no process
     (a header it cannot follow) or warns with report's own error line,
     its figures stopping before the damage; on a trace report loads, it
     gives report's warnings (but "holds no records": a trace without
     records is no process to the follower, which shows none).

Exit status 0 when every check held, 1 when one did not, 2 usage.
"""
import argparse, os, random, shutil, struct, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor

SLAB_MAGIC = 0x424c534d

def slabs(data):
    """[(offset, size, claimed, records_end, has_fw)] of a trace's slabs."""
    if len(data) < 64 or data[:8] != b'MEMTRACE':
        return 0, []
    hs, ss = struct.unpack_from('<II', data, 12)
    if ss < 64 or hs < 64:
        return hs, []
    out, off = [], hs
    while off < len(data):
        end = min(off + ss, len(data))
        claimed = end - off >= 16 and struct.unpack_from('<I', data, off)[0] == SLAB_MAGIC
        pos, fw = off + 16, False
        if claimed:
            while pos < end:
                b = data[pos]
                if b == 0:
                    break
                if b & 0x80:
                    fw = fw or (b > 0x80 and pos + 1 < end and data[pos + 1] & 3 == 2)
                    pos += 1 + (b & 0x7f)
                    continue
                fw = fw or b in (16, 17, 18)
                if pos + 8 > end:
                    break
                size = data[pos + 1] * 8 or struct.unpack_from('<I', data, pos + 4)[0]
                if size == 0:
                    break
                pos += size
            pos = min(pos, end)
        out.append((off, end - off, claimed, pos, fw))
        off += ss
    return hs, out

def mutate(data, rng):
    """(kind, what, mutant bytes) for one random mutation of data."""
    d = bytearray(data)
    hs, sl = slabs(data)
    claimed = [s for s in sl if s[2]]
    unclaimed = [s for s in sl if not s[2] and s[1] == (sl[0][1] if sl else 0)]
    ss = sl[0][1] if sl else 4096
    kinds = ['flip'] * 6 + ['ignored'] * 4 + ['cut'] * 3 + ['cut-slab', 'zero'] + \
            ['dup'] * 2 + ['swap'] * 2 + ['range'] * 2
    kind = rng.choice(kinds)
    if kind == 'flip':
        n = rng.choice([1, 1, 2, 4, 16])
        for _ in range(n):
            # mostly inside records, where damage is interesting
            if claimed and rng.random() < 0.85:
                s = rng.choice(claimed)
                i = rng.randrange(s[0], max(s[0] + 1, s[3]))
            else:
                i = rng.randrange(len(d))
            if rng.random() < 0.5:
                d[i] ^= 1 << rng.randrange(8)
            else:
                d[i] = rng.choice([0, 0xff, 0x80, 0x7f, rng.randrange(256)])
        return kind, '%d bytes' % n, bytes(d)
    if kind == 'range':
        s = rng.choice(claimed) if claimed else (0, len(d), 1, len(d), False)
        a = rng.randrange(s[0], max(s[0] + 1, s[3]))
        n = rng.choice([8, 16, 64, 512])
        fill = rng.choice(['zero', 'random', 'ones'])
        for i in range(a, min(a + n, len(d))):
            d[i] = 0 if fill == 'zero' else 0xff if fill == 'ones' else rng.randrange(256)
        return kind, '%s %d at %#x' % (fill, n, a), bytes(d)
    if kind == 'ignored':
        spots = [(52, 64)]                              # the header's reserved bytes
        if hs > 64:
            spots.append((64, hs))                      # padding before slab 0
        for s in unclaimed:
            spots.append((s[0] + 4, s[0] + s[1]))       # never claimed (magic kept out)
        for s in claimed:
            if s[3] + 1 < s[0] + s[1]:
                spots.append((s[3] + 1, s[0] + s[1]))   # after the records' end
        a, b = rng.choice(spots)
        n = rng.choice([1, 8, 64, 1024])
        at = rng.randrange(a, b)
        for i in range(at, min(at + n, b)):
            d[i] = rng.randrange(256)
        return kind, '%d bytes at %#x' % (min(n, b - at), at), bytes(d)
    if kind == 'cut':
        while True:
            n = rng.randrange(0, len(d))
            if n < hs or (n - hs) % ss:
                return kind, 'to %d bytes' % n, bytes(d[:n])
    if kind == 'cut-slab':
        k = rng.randrange(0, len(sl)) if sl else 0
        n = hs + k * ss
        return kind, 'to %d slabs' % k, bytes(d[:n])
    if kind == 'zero':
        if not claimed:
            return kind, 'nothing', bytes(d)
        s = rng.choice(claimed)
        d[s[0]:s[0] + 4] = b'\0\0\0\0'
        return kind, 'slab at %#x' % s[0], bytes(d)
    if kind == 'dup':
        if not claimed:
            return kind, 'nothing', bytes(d)
        s = rng.choice(claimed)
        body = bytes(d[s[0]:s[0] + s[1]])
        if s[4]:
            kind = 'dup-fw'
        if unclaimed and rng.random() < 0.5:
            t = rng.choice(unclaimed)
            d[t[0]:t[0] + t[1]] = body
            return kind, 'slab %#x over %#x' % (s[0], t[0]), bytes(d)
        if len(body) == ss:
            return kind, 'slab %#x appended' % s[0], bytes(d) + body
        return kind, 'nothing', bytes(d)
    # swap
    if len(claimed) < 2:
        return kind, 'nothing', bytes(d)
    a, b = rng.sample(claimed, 2)
    if a[1] != b[1]:
        return kind, 'nothing', bytes(d)
    sa, sb = bytes(d[a[0]:a[0] + a[1]]), bytes(d[b[0]:b[0] + b[1]])
    d[a[0]:a[0] + a[1]], d[b[0]:b[0] + b[1]] = sb, sa
    return kind, 'slabs %#x and %#x' % (a[0], b[0]), bytes(d)

COMMANDS = [
    ('report', ['report', '--no-db']),
    ('json', ['report', '--no-db', '--json']),
    ('dump', ['dump']),
    ('check', ['check', 'peak <= 1TiB']),
    ('view', ['view', '-o', '{dir}/view.html']),
    ('perfetto', ['export', '--format', 'perfetto', '-o', '{dir}/out.json']),
    ('collapsed', ['export', '--format', 'collapsed', '-o', '{dir}/out.folded']),
    ('torch', ['export', '--format', 'torch-snapshot', '-o', '{dir}/out.pickle']),
    ('top', ['top', '--once', '--bytes']),
    ('live', ['top', '--once', '--bytes', '--dir', '.', None]),
]
PIPELINE = ['report', 'json', 'view', 'perfetto', 'collapsed', 'torch']

def run_all(memtrace, path):
    """{name: (status, stdout, stderr)} of every command on the trace at path."""
    d = os.path.dirname(path)
    out = {}
    for name, args in COMMANDS:
        # run beside the trace, named as the seed is: the same text out
        argv = [memtrace] + [a.replace('{dir}/', '') for a in args if a] + \
            ([] if None in args else [os.path.basename(path)])
        try:
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=20, cwd=d)
            out[name] = (p.returncode, p.stdout, p.stderr)
        except subprocess.TimeoutExpired:
            out[name] = ('hang', b'', b'')
    return out

def warnings(err):
    return [l for l in err.decode('utf-8', 'replace').splitlines() if ': warning: ' in l]

def said_trace(r):
    """The report refused the trace, or its reader warned about it."""
    st, out, err = r['report']
    return st != 0 or bool(warnings(err))

def said(r):
    """That, or the report warned about what it read (a framework's
    figures that do not fit its own counters, say)."""
    return said_trace(r) or b'warning:' in r['report'][1]

def live_judge(r):
    """What the live follower broke of its promises (the docstring's last group)."""
    st, out, err = r['live']
    # the follower names the trace ./trace.bin
    said = [l.replace("'./", "'") for l in warnings(err)]
    rs, rerr = r['report'][0], r['report'][2].decode('utf-8', 'replace').strip()
    if st != 0:
        return ['live: exit status %s' % st]
    if rs != 0:
        msg = rerr[len('memtrace: '):] if rerr.startswith('memtrace: ') else rerr
        if out.startswith(b'memtrace top: 0 process') or any(msg in l for l in said):
            return []
        return ['live shows a trace report refuses (%s) without its line' % msg[:120]]
    want = warnings(r['report'][2])
    if out.startswith(b'memtrace top: 0 process'):
        want = [l for l in want if 'holds no records' not in l]
    return [] if said == want else ['live warns %s where report warns %s' % (said, want)]

def judge(kind, r, base):
    """The broken promises, as short lines."""
    bad = []
    for name, (st, out, err) in r.items():
        if st == 'hang':
            bad.append('%s: no end in 20 s' % name)
            continue
        if st < 0 or st > 2:
            bad.append('%s: exit status %d' % (name, st))
        if b'runtime error' in err or b'Sanitizer' in err:
            line = [l for l in err.decode('utf-8', 'replace').splitlines()
                    if 'runtime error' in l or 'Sanitizer' in l][0]
            bad.append('%s: %s' % (name, line[:200]))
        if name not in ('check', 'top', 'live') and st in (1, 2) and len(err.splitlines()) != 1:
            bad.append('%s: refused with %d lines on stderr' % (name, len(err.splitlines())))
    if bad:
        return bad
    rs = r['report'][0]
    for name in PIPELINE[1:]:
        if (r[name][0] == 0) != (rs == 0):
            bad.append('%s exits %d where report exits %d' % (name, r[name][0], rs))
        elif rs == 0 and warnings(r[name][2]) != warnings(r['report'][2]):
            bad.append('%s warns otherwise than report' % name)
    if r['dump'][0] != 0 and rs == 0:
        bad.append('dump refuses what report accepts')
    if said_trace(r) and r['check'][0] == 0:
        bad.append('check passes a trace report refuses or warns about')
    if kind == 'cut' and not said(r):
        bad.append('cut inside a slab, and report says nothing')
    if kind in ('ignored', 'dup', 'dup-fw', 'swap') and not said(r):
        for name in ('report', 'json') + (('dump',) if kind == 'ignored' else ()):
            if r[name][1] != base[name][1]:
                bad.append('%s: no warning, and not what the seed gives' % name)
    if r['top'][0] == 0 and rs != 0:
        bad.append('top --once shows a trace report refuses')
    return bad + live_judge(r)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--memtrace', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--seconds', type=float, default=0)
    ap.add_argument('--mutants', type=int, default=0)
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 1)
    ap.add_argument('seeds', nargs='+')
    a = ap.parse_args()
    if not a.seconds and not a.mutants:
        a.mutants = 200
    memtrace = os.path.abspath(a.memtrace)
    a.work = os.path.abspath(a.work)
    os.makedirs(a.work, exist_ok=True)
    seeds = []
    for i, s in enumerate(a.seeds):
        data = open(s, 'rb').read()
        d = os.path.join(a.work, 'seed%d' % i)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, 'trace.bin')
        open(path, 'wb').write(data)
        base = run_all(memtrace, path)
        if said(base) or any(base[n][0] != 0 for n in PIPELINE + ['dump', 'check']):
            print('fuzz2: seed %s is not a clean trace: %s' %
                  (s, base['report'][2].decode('utf-8', 'replace').strip()[:300]))
            return 1
        seeds.append((s, data, base))

    def one(i):
        rng = random.Random(a.seed * 1000003 + i)
        sname, data, base = seeds[rng.randrange(len(seeds))]
        kind, what, m = mutate(data, rng)
        d = os.path.join(a.work, 'm%d' % i)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, 'trace.bin')     # the seed's name: the same paths in output
        open(path, 'wb').write(m)
        r = run_all(memtrace, path)
        bad = judge(kind, r, base)
        if not bad:
            shutil.rmtree(d, ignore_errors=True)
        return i, kind, sname, what, bad

    start, failures, counts, n = time.time(), 0, {}, 0
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        pending, i = [], 0
        while True:
            more = (not a.mutants or i < a.mutants) and \
                   (not a.seconds or time.time() - start < a.seconds)
            while more and len(pending) < 2 * a.jobs:
                pending.append(ex.submit(one, i))
                i += 1
                more = (not a.mutants or i < a.mutants) and \
                       (not a.seconds or time.time() - start < a.seconds)
            if not pending:
                break
            f = pending.pop(0)
            idx, kind, sname, what, bad = f.result()
            n += 1
            counts[kind] = counts.get(kind, 0) + 1
            if bad:
                failures += 1
                print('FAIL mutant %d (%s %s of %s, kept in %s/m%d): %s' %
                      (idx, kind, what, sname, a.work, idx, '; '.join(bad)))
    print('fuzz2: %d mutants (%s) of %d seeds, seed %d, in %.0f s: %d failed' %
          (n, ', '.join('%s %d' % kv for kv in sorted(counts.items())), len(seeds), a.seed,
           time.time() - start, failures))
    return 1 if failures else 0

if __name__ == '__main__':
    sys.exit(main())
