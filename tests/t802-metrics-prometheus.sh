#!/bin/sh
# `memtrace run --metrics-port 0 --metrics-textfile DIR` on a job waiting in
# its phase 2 (rt-top-phases, started from a folder whose name holds a
# double quote, a backslash and a newline): promtool accepts the exposition;
# a real Prometheus (127.0.0.1, temporary config and data, 200 ms scrapes)
# scrapes /metrics, and node_exporter's textfile collector (127.0.0.1) reads
# the textfile; the values Prometheus's HTTP API returns for both are
# `memtrace report`'s of the same traces and those computed by hand, the
# hostile command comes back intact. Every server is stopped at the end and
# bounded by timeout(1) meanwhile.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/toplib.sh"
cd "$T" || exit 1
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 &&
	command -v prometheus-node-exporter >/dev/null 2>&1 ||
	skip "no prometheus, promtool or prometheus-node-exporter (scripts/install-deps.sh installs them)"
MiB=1048576

# a hostile program path: quote, backslash, newline
HOSTILE="$T/we\"ird\\dir
x"
mkdir -p "$HOSTILE" tf && cp "$CLIENTS/rt-top-phases" "$HOSTILE/" || fail "hostile copy"
CLIENTS_SAVED=$CLIENTS
CLIENTS=$HOSTILE
top_start --metrics-port 0 --metrics-textfile tf --metrics-interval 0.2
CLIENTS=$CLIENTS_SAVED
top_wait 1
top_go
top_wait 2
port=$(sed -n 's|^memtrace: serving metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' job.err)
[ -n "$port" ] || fail "no 'serving metrics' line: $(cat job.err)"

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
get() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1"; }

# the exposition, as Prometheus's own checker sees it
sleep 0.5
get "http://127.0.0.1:$port/metrics" >scrape || fail "GET /metrics"
promtool check metrics <scrape >promtool.out 2>&1 || fail "promtool: $(cat promtool.out)"
code=$(python3 -c 'import sys, urllib.request, urllib.error
try: urllib.request.urlopen(sys.argv[1], timeout=5); print(200)
except urllib.error.HTTPError as e: print(e.code)' "http://127.0.0.1:$port/")
expect_eq "$code" 404 "GET / (only /metrics is served)"

pport=$(freeport)
nport=$(freeport)
cat >prom.yml <<EOC
global:
  scrape_interval: 200ms
  scrape_timeout: 150ms
scrape_configs:
  - job_name: memtrace
    static_configs: [ { targets: [ "127.0.0.1:$port" ] } ]
  - job_name: node
    static_configs: [ { targets: [ "127.0.0.1:$nport" ] } ]
EOC
timeout 60 prometheus-node-exporter --web.listen-address="127.0.0.1:$nport" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$T/tf" >node.log 2>&1 &
NODE=$!
timeout 60 prometheus --config.file=prom.yml --storage.tsdb.path="$T/data" \
	--web.listen-address="127.0.0.1:$pport" >prom.log 2>&1 &
PROM=$!
trap 'rc=$?; kill $JOB $PROM $NODE 2>/dev/null; wait $PROM $NODE 2>/dev/null; rm -f "/dev/shm$SHM_NAME"
      if [ $rc = 0 ] || [ $rc = 77 ]; then rm -rf "$T"; else echo "  (kept $T)"; fi' EXIT

# q QUERY: "labels value" lines of an instant query (10 s for them to come)
q() {
	i=0
	while [ $i -lt 50 ]; do
		python3 - "http://127.0.0.1:$pport/api/v1/query" "$1" >q.out 2>/dev/null <<'EOP'
import json, sys, urllib.parse, urllib.request
u = sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]})
r = json.load(urllib.request.urlopen(u, timeout=5))
for s in sorted(r["data"]["result"], key=lambda s: json.dumps(s["metric"], sort_keys=True)):
    m = s["metric"]
    print(json.dumps({k: m[k] for k in sorted(m) if k not in ("instance", "__name__")}), s["value"][1])
EOP
		[ -s q.out ] && [ "$(wc -l <q.out)" -ge "${2:-1}" ] && { cat q.out; return 0; }
		sleep 0.2
		i=$((i + 1))
	done
	fail "Prometheus has no '$1' ($2 series): $(tail -3 prom.log)"
}

pids=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(str(p["pid"]) for p in r["processes"]))' /dev/null 2>/dev/null)
"$MEMTRACE" report --no-db --json trace*.bin >rep.json 2>err || fail "report: $(cat err)"
want=$(python3 -c 'import json
r = json.load(open("rep.json"))
for p in sorted(r["processes"], key=lambda p: p["pid"]):
    print(p["pid"], p["devices"][0]["left_at_exit_bytes"], p["devices"][0]["peak_reserved_bytes"])')
got=$(q 'memtrace_reserved_bytes{job="memtrace"}' 3 | python3 -c 'import json, sys
for l in sys.stdin:
    m, v = l.rsplit(" ", 1)
    print(json.loads(m)["pid"], v.strip())' | sort -n)
peak=$(q 'memtrace_peak_reserved_bytes{job="memtrace"}' 3 | awk '{ print $NF }' | tr '\n' ' ')
expect_eq "$(echo "$got" | awk '{ print $2 }' | tr '\n' ' ')" "$((17 * MiB)) $((8 * MiB)) $((10 * MiB)) " \
	"Prometheus: each process's reserved (by hand)"
expect_eq "$(echo "$got" | awk '{ print $1 }' | tr '\n' ' ')" "$(echo "$want" | awk '{ print $1 }' | tr '\n' ' ')" \
	"Prometheus: the processes are the report's"
expect_eq "$got" "$(echo "$want" | awk '{ print $1, $2 }')" "Prometheus: reserved = the report's live at exit"
expect_eq "$(q 'memtrace_device_reserved_bytes{job="memtrace"}' | awk '{ print $NF }')" "$((35 * MiB))" \
	"Prometheus: the device's reserved"
expect_eq "$(q 'sum(memtrace_alloc_failures_total{job="memtrace"})' | awk '{ print $NF }')" \
	"$(python3 -c 'import json; print(json.load(open("rep.json"))["failures_total"])')" \
	"Prometheus: failures = the report's"
expect_eq "$(q 'memtrace_pinned_host_bytes{job="memtrace"} > 0' | awk '{ print $NF }')" "$((4 * MiB))" \
	"Prometheus: the parent's pinned host memory"
expect_eq "$(q 'memtrace_run_shm_bytes{job="memtrace"}' | awk '{ print $NF }')" "$MiB" "Prometheus: /dev/shm bytes"
# the report's sites (each worker's 8 MiB line one per caller)
expect_eq "$(q 'count(memtrace_site_live_bytes{job="memtrace"})' | awk '{ print $NF }')" 6 "Prometheus: the live sites"
cmd=$(q 'memtrace_process_running{job="memtrace"}' 3 | head -1 | python3 -c 'import json, sys
print(json.loads(sys.stdin.read().rsplit(" ", 1)[0])["command"] == sys.argv[1] + "/rt-top-phases")' "$HOSTILE")
expect_eq "$cmd" True "Prometheus: the hostile command label, intact"
# the textfile, through node_exporter
expect_eq "$(q 'memtrace_device_reserved_bytes{job="node"}' | awk '{ print $NF }')" "$((35 * MiB))" \
	"node_exporter: the device's reserved"
expect_eq "$(q 'memtrace_reserved_bytes{job="node"}' 3 | awk '{ print $NF }' | sort -n | tr '\n' ' ')" \
	"$((8 * MiB)) $((10 * MiB)) $((17 * MiB)) " "node_exporter: each process's reserved"
expect_eq "$(q 'node_textfile_scrape_error{job="node"}' | awk '{ print $NF }')" 0 "node_exporter: textfile read without error"

kill $PROM $NODE 2>/dev/null
wait $PROM $NODE 2>/dev/null
top_go
top_wait 3
top_end
# the last frame, written after the job: every process over, nothing left
expect_eq "$(grep '^memtrace_device_reserved_bytes' tf/memtrace.prom | awk '{ print $NF }')" 0 \
	"the textfile's last frame: the device's reserved"
expect_eq "$(grep -c '^memtrace_process_running.* 0$' tf/memtrace.prom)" 3 "the textfile's last frame: processes over"
[ -z "$(ls -A tf | grep -v '^memtrace.prom$')" ] || fail "temporary files left in the textfile folder: $(ls -A tf)"
exit 0
