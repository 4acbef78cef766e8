# timeline.gp - GPU memory of one device over time: reserved (held from the
# driver), allocated (in the program's buffers) and device used (cuMemGetInfo),
# with the peak and each failed allocation marked.
#
#   gnuplot -c scripts/timeline.gp DATA.tsv OUT.png [PEAK.tsv] [TITLE] [FAILURES.tsv] [USED.tsv]
#
# DATA.tsv: time_s reserved_MiB allocated_MiB cached_MiB (the state from
#   that time to the next row)
# PEAK.tsv, FAILURES.tsv: time_s MiB kind label (rows: the peak; each failure)
# USED.tsv: time_s device_used_MiB, one row per cuMemGetInfo sample: drawn
#   as points, since nothing is known of the device between two samples
data = ARG1
out = ARG2
marks = (ARGC >= 3 && ARG3 ne "") ? ARG3 : ""
title = (ARGC >= 4 && ARG4 ne "") ? ARG4 : "GPU memory over time"
fails = (ARGC >= 5) ? ARG5 : ""
used = (ARGC >= 6) ? ARG6 : ""
if (out[strlen(out)-2:] eq "svg") { set terminal svg noenhanced size 1100,500 dynamic font "sans,11" } \
else { set terminal pngcairo noenhanced size 1100,500 font "sans,10" }
set output out
set datafile separator "\t"
stats data using 1 nooutput
# short runs read better in milliseconds
if (STATS_max < 1) { ts = 1000; tunit = "ms" } else { ts = 1; tunit = "s" }
stats data using 2 nooutput
rmax = STATS_max
umax = 0
if (used ne "") { stats used using 2 nooutput; umax = STATS_max }
# when the device holds far more than the program (a CUDA context of
# hundreds of MiB), device used gets its own axis on the right, so that the
# program's curves stay readable
split = (umax > 4 * rmax) ? 1 : 0
if (split) { set y2label "device used (MiB)"; set y2tics; set ytics nomirror; set y2range [0:*] }
set title title
set xlabel "time since start (".tunit.")"
set ylabel "MiB"
set grid ytics lc rgb "#dddddd"
set key top left box opaque
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set datafile missing "NaN"
set style fill transparent solid 0.25 noborder
p = 'plot data using ($1*ts):2 with fillsteps lc rgb "#4a7ebb" title "reserved (held from the driver)", ' . \
    'data using ($1*ts):2 with steps lw 2 lc rgb "#4a7ebb" notitle, ' . \
    'data using ($1*ts):3 with steps lw 2 lc rgb "#2ca02c" title "allocated (program buffers)"'
if (used ne "") { \
  p = p . ', used using ($1*ts):2 with points pt 6 ps 1 lc rgb "#7f7f7f" ' . \
      (split ? 'axes x1y2 title "device used (cuMemGetInfo samples, right axis)"' : 'title "device used (cuMemGetInfo samples)"') \
}
if (marks ne "") { \
  p = p . ', marks using ($1*ts):2 with points pt 7 ps 1.5 lc rgb "#d62728" title "peak", ' . \
      'marks using ($1*ts):2:4 with labels offset 0,1 font ",9" tc rgb "#d62728" notitle' \
}
if (fails ne "") { \
  p = p . ', fails using ($1*ts):2 with points pt 2 ps 2 lw 2 lc rgb "#ff7f0e" title "failed allocation"' \
}
eval p
