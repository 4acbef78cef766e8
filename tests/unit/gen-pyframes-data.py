# tests/unit/gen-pyframes-data.py - writes tests/unit/pyframes-data.h, the
# real line tables test-analyze-pyframes.c decodes: a known snippet compiled
# by each CPython version, every code object's raw line table (co_lnotab in
# 3.9, co_linetable after), first line, and the line of every instruction as
# that interpreter itself reports it (dis for 3.9, co_lines() after).
#
#   tests/unit/gen-pyframes-data.sh > tests/unit/pyframes-data.h
import dis
import sys
import types

SNIPPET = '''
import os

def simple(a, b):
    c = a + b
    return c * 2

def loops(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += i
        else:
            total -= 1
    while total > 100:
        total //= 2
    return total

def multiline(x):
    y = (x +
         1 +
         2)
    z = [i
         for i in range(y)]
    return (y,
            z)

class K:
    def method(self):
        try:
            return 1 / 0
        except ZeroDivisionError:
            return -1
        finally:
            pass

def gen():
    yield 1
    yield 2
''' + '\n' * 300 + '''
def far_away():
    a = 1
''' + '\n' * 150 + '''
    b = 2
    return a + b

async def coro(x):
    return await x
'''

def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c)

def lines(co):
    """(offset in code units, line or -1) for every instruction."""
    n = len(co.co_code) // 2
    out = []
    if sys.version_info >= (3, 10):
        table = {}
        for start, end, line in co.co_lines():
            for a in range(start, end, 2):
                table[a // 2] = -1 if line is None else line
        return [(k, table[k]) for k in range(n) if k in table]
    line = co.co_firstlineno
    starts = dict(dis.findlinestarts(co))
    for k in range(n):
        line = starts.get(2 * k, line)
        out.append((k, line))
    return out

def cbytes(b):
    return ", ".join("0x%02x" % x for x in b) or "0"

v = sys.version_info
tag = "%d%d" % (v[0], v[1])
co = compile(SNIPPET, "snippet.py", "exec")
entries = []
for i, c in enumerate(codes(co)):
    table = c.co_lnotab if v < (3, 10) else c.co_linetable
    name = "py%s_%d" % (tag, i)
    pairs = lines(c)
    print("static const unsigned char %s_table[] = { %s };" % (name, cbytes(table)))
    print("static const int %s_lines[][2] = {" % name)
    for k in range(0, len(pairs), 8):
        print("\t" + " ".join("{ %d, %d }," % p for p in pairs[k:k + 8]))
    print("};")
    entries.append("\t{ 0x%02x%02x, %d, \"%s\", %s_table, %d, %s_lines, %d },"
                   % (v[0], v[1], c.co_firstlineno, c.co_name, name, len(table), name, len(pairs)))
print("#define PY%s_CODES \\" % tag)
print(" \\\n".join(entries))
print()
