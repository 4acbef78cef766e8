#!/bin/sh
# Issue 25 row 6: idle and slow clients of /metrics never shut scrapes out.
# On a job waiting in its phase 1 (toplib.sh), `memtrace top` serves
# /metrics on 127.0.0.1; 100 connections that send nothing, 20 that send
# half a request and 8 that ask and never read the answer are held open,
# and while they are, each of 10 scrapes is answered within a second.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/toplib.sh"
cd "$T" || exit 1
command -v python3 >/dev/null 2>&1 || skip "no python3"

top_start
top_wait 1
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$MEMTRACE" top --interval 0.2 --metrics-port "127.0.0.1:$port" trace.bin \
	>top.out 2>top.err </dev/null &
TOP=$!
trap 'rc=$?; kill $JOB $TOP 2>/dev/null; rm -f "/dev/shm$SHM_NAME"
      if [ $rc = 0 ] || [ $rc = 77 ]; then rm -rf "$T"; else echo "  (kept $T)"; fi' EXIT
python3 - "$port" >hold.out 2>&1 <<'PY'
import socket, sys, time
port = int(sys.argv[1])
def hold():
    return socket.create_connection(('127.0.0.1', port), timeout=5)
def scrape():
    s = socket.create_connection(('127.0.0.1', port), timeout=1)
    s.sendall(b'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n')
    data = b''
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    return data
# the server up (5 s at most)
for i in range(50):
    try:
        scrape()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit('no server on port %d' % port)
held = []
for i in range(100):                            # idle
    held.append(hold())
for i in range(20):                             # half a request
    s = hold()
    s.sendall(b'GET /metr')
    held.append(s)
for i in range(8):                              # asks, never reads
    s = hold()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    s.sendall(b'GET /metrics HTTP/1.1\r\n\r\n')
    held.append(s)
ok = 0
for i in range(10):
    t = time.time()
    try:
        d = scrape()
        if b'memtrace_processes{state="all"}' in d and time.time() - t < 1:
            ok += 1
        else:
            print('scrape %d: %d bytes in %.2f s' % (i, len(d), time.time() - t))
    except OSError as e:
        print('scrape %d: %s after %.2f s' % (i, e, time.time() - t))
    # the idle ones keep coming back
    held.append(hold())
print('answered %d of 10' % ok)
sys.exit(0 if ok == 10 else 1)
PY
rc=$?
[ $rc = 0 ] || fail "scrapes shut out by idle clients: $(cat hold.out) $(cat top.err)"
kill $TOP 2>/dev/null
top_go; top_wait 2; top_go; top_wait 3; top_end
exit 0
