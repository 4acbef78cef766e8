# diff-timeline.gp - the GPU memory of one device in two runs, overlaid
# (memtrace diff --plot): reserved and allocated before (dashed) and after
# (solid), each run's time since its own start, each run's peak marked.
#
#   gnuplot -c scripts/diff-timeline.gp DATA.tsv OUT.png [PEAKS.tsv] [TITLE]
#
# DATA.tsv: time_s before_reserved_MiB before_allocated_MiB
#   after_reserved_MiB after_allocated_MiB (the state of each run from that
#   time to the next row)
# PEAKS.tsv: time_s MiB before|after label (one row per run)
# The legend sits right of the plot, never over the data.
data = ARG1
out = ARG2
marks = (ARGC >= 3 && ARG3 ne "") ? ARG3 : ""
title = (ARGC >= 4 && ARG4 ne "") ? ARG4 : "GPU memory over time, before and after"
if (out[strlen(out)-2:] eq "svg") { set terminal svg noenhanced size 1200,480 dynamic font "sans,11" } \
else { set terminal pngcairo noenhanced dashed size 1200,480 font "sans,10" }
set output out
set datafile separator "\t"

stats data using 1 nooutput
xmin = STATS_min; xmax = STATS_max
stats data using 2 nooutput
rmax = STATS_max
stats data using 4 nooutput
rmax = (STATS_max > rmax) ? STATS_max : rmax
if (xmax < 1) { ts = 1000; tunit = "ms" } else { ts = 1; tunit = "s" }
span = (xmax > xmin) ? (xmax - xmin) : 1e-3
set xrange [(xmin - span * 0.02) * ts:(xmax + span * 0.02) * ts]
set yrange [0:(rmax > 0 ? rmax * 1.18 : 1)]

set lmargin at screen 0.07
set rmargin at screen 0.73
set tmargin at screen 0.91
set bmargin at screen 0.12
set key at screen 0.745, graph 1 left top Left reverse samplen 4 spacing 1.2
set grid ytics lc rgb "#dddddd"
set title title
set xlabel "time since each run's start (".tunit.")"
set ylabel "MiB"

# reserved wide and light, allocated thin on top: where the two are equal
# (no cache) both stay visible
p = 'plot data using ($1*ts):2 with steps lw 5 dt 2 lc rgb "#9dbbe0" title "reserved before", ' . \
    'data using ($1*ts):4 with steps lw 5 dt 1 lc rgb "#9dbbe0" title "reserved after", ' . \
    'data using ($1*ts):3 with steps lw 1.5 dt 2 lc rgb "#2ca02c" title "allocated before", ' . \
    'data using ($1*ts):5 with steps lw 1.5 dt 1 lc rgb "#16701a" title "allocated after"'
if (marks ne "") { \
  p = p . ', marks using ($1*ts):(strcol(3) eq "before" ? $2 : NaN) with points pt 6 ps 1.8 lw 2 lc rgb "#d62728" title "peak before", ' . \
      'marks using ($1*ts):(strcol(3) eq "after" ? $2 : NaN) with points pt 7 ps 1.5 lc rgb "#d62728" title "peak after", ' . \
      'marks using ($1*ts):2:4 with labels offset 0,1 font ",9" tc rgb "#d62728" notitle' \
}
eval p
