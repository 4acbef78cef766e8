# timeline.gp - GPU memory of one device over time: reserved (held from the
# driver) and allocated (in the program's buffers), the peak and each failed
# allocation marked; below, in a panel of its own, device used (cuMemGetInfo).
#
#   gnuplot -c scripts/timeline.gp DATA.tsv OUT.png [PEAK.tsv] [TITLE] [FAILURES.tsv] [USED.tsv]
#
# DATA.tsv: time_s reserved_MiB allocated_MiB cached_MiB (the state from
#   that time to the next row)
# PEAK.tsv, FAILURES.tsv: time_s MiB kind label (rows: the peak; each failure)
# USED.tsv: time_s device_used_MiB [device_total_MiB], one row per
#   cuMemGetInfo sample. Nothing is known of the device between two samples,
#   so each is drawn as a stem ending in a point at its own time, with its
#   value, never as a line that would carry an old sample forward. Device
#   used counts the whole device (the CUDA context, other processes): often
#   ten times what the program reserved. On the same axis it would flatten
#   the program's curves, and on a second axis its points would sit above or
#   below the peak by the accident of two scales; a panel of its own, on the
#   same time axis, keeps both readable and apart.
# The legends sit right of the plots, never over the data.
data = ARG1
out = ARG2
marks = (ARGC >= 3 && ARG3 ne "") ? ARG3 : ""
title = (ARGC >= 4 && ARG4 ne "") ? ARG4 : "GPU memory over time"
fails = (ARGC >= 5) ? ARG5 : ""
used = (ARGC >= 6) ? ARG6 : ""
height = (used ne "") ? 640 : 480
if (out[strlen(out)-2:] eq "svg") { set terminal svg noenhanced size 1200,height dynamic font "sans,11" } \
else { set terminal pngcairo noenhanced size 1200,height font "sans,10" }
set output out
set datafile separator "\t"
set datafile missing "NaN"

# the time axis, shared by both panels: the timeline and the samples
stats data using 1 nooutput
xmin = STATS_min; xmax = STATS_max
stats data using 2 nooutput
rmax = STATS_max
if (used ne "") { \
  stats used using 1 nooutput; nused = STATS_records; \
  xmin = (STATS_min < xmin) ? STATS_min : xmin; xmax = (STATS_max > xmax) ? STATS_max : xmax; \
  stats used using 2 nooutput; umax = STATS_max; \
  stats used using 3 nooutput; tmax = STATS_max \
}
# short runs read better in milliseconds
if (xmax < 1) { ts = 1000; tunit = "ms" } else { ts = 1; tunit = "s" }
span = (xmax > xmin) ? (xmax - xmin) : 1e-3
set xrange [(xmin - span * 0.02) * ts:(xmax + span * 0.02) * ts]

set lmargin at screen 0.07
set rmargin at screen 0.73
set key Left reverse samplen 2 spacing 1.2
set grid ytics lc rgb "#dddddd"
set style fill transparent solid 0.25 noborder

if (used ne "") { set multiplot }

# --- the program: reserved and allocated -----------------------------------
if (used ne "") { set tmargin at screen 0.93; set bmargin at screen 0.40; set format x ""; unset xlabel } \
else { set tmargin at screen 0.91; set bmargin at screen 0.12; set xlabel "time since start (".tunit.")" }
set key at screen 0.745, graph 1 left top
set title title
set ylabel "MiB (this program)"
set yrange [0:(rmax > 0 ? rmax * 1.18 : 1)]
p = 'plot data using ($1*ts):2 with fillsteps lc rgb "#4a7ebb" title "reserved (held from the driver)", ' . \
    'data using ($1*ts):2 with steps lw 2 lc rgb "#4a7ebb" notitle, ' . \
    'data using ($1*ts):3 with steps lw 2 lc rgb "#2ca02c" title "allocated (program buffers)"'
if (marks ne "") { \
  p = p . ', marks using ($1*ts):2 with points pt 7 ps 1.5 lc rgb "#d62728" title "peak", ' . \
      'marks using ($1*ts):2:4 with labels offset 0,1 font ",9" tc rgb "#d62728" notitle' \
}
if (fails ne "") { \
  p = p . ', fails using ($1*ts):2 with points pt 2 ps 2 lw 2 lc rgb "#ff7f0e" title "failed allocation"' \
}
eval p

# --- the device: cuMemGetInfo samples --------------------------------------
if (used ne "") { \
  unset title; \
  set tmargin at screen 0.33; set bmargin at screen 0.09; \
  set format x "% h"; set xlabel "time since start (".tunit.")"; \
  set ylabel "MiB (whole device)"; \
  set key at screen 0.745, graph 1 left top; \
  showtotal = (tmax > 0 && tmax <= umax * 1.5) ? 1 : 0; \
  top = showtotal ? tmax : umax; \
  set yrange [0:(top > 0 ? top * 1.3 : 1)]; \
  set ytics 0, (top > 0 ? top / 2 : 1); \
  q = 'plot used using ($1*ts):2 with impulses lw 2 lc rgb "#555555" notitle, ' . \
      'used using ($1*ts):2 with points pt 7 ps 1.2 lc rgb "#555555" ' . \
      'title "device used (cuMemGetInfo sample)"'; \
  if (nused <= 12) { q = q . ', used using ($1*ts):(int($0) % 2 ? NaN : $2):(sprintf("%.0f", $2)) with labels left offset 0.7,0.5 font ",9" notitle' }; \
  if (nused >= 2 && nused <= 12) { q = q . ', used using ($1*ts):(int($0) % 2 ? $2 : NaN):(sprintf("%.0f", $2)) with labels right offset -0.7,0.5 font ",9" notitle' }; \
  if (showtotal) { q = q . sprintf(', %g with lines dt 2 lc rgb "#999999" title "device total %.0f MiB"', tmax, tmax) } \
  else { if (tmax > 0) { q = q . sprintf(', NaN with lines lc rgb "white" title "(device total %.0f MiB)"', tmax) } }; \
  eval q; \
  unset multiplot \
}
