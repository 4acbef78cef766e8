# addrmap.gp - the address-space map of one device: each allocation is a box
# from its allocation to its free (x) over its address range (y). Large
# empty address ranges are squeezed out (the y axis shows the compacted
# offset in MiB; small empty ranges keep their height, large ones become one
# small gap; each process has its own band), so boxes alive at the same time
# never overlap and a hole inside a box's lifetime is free space: this is
# how fragmentation looks. Boxes are drawn at least 1/500 of the run wide,
# to stay visible; the TSV keeps their true times.
#
#   gnuplot -c scripts/addrmap.gp DATA.tsv OUT.png [TITLE] [NOTE]
#
# DATA.tsv: t_alloc_s t_free_s y_lo_MiB y_hi_MiB process address live_at_end
# (t_free_s: the end of the run for what was still live)
# NOTE: said under the title, e.g. "largest 20,000 of 2,000,000 allocations
# shown" when memtrace plot kept only the largest boxes
data = ARG1
out = ARG2
title = (ARGC >= 3) ? ARG3 : "address space over time"
note = (ARGC >= 4) ? ARG4 : ""
if (out[strlen(out)-2:] eq "svg") { set terminal svg noenhanced size 1100,600 dynamic font "sans,11" } \
else { set terminal pngcairo noenhanced size 1100,600 font "sans,10" }
set output out
set datafile separator "\t"
stats data using 1 nooutput
tmin = STATS_min
stats data using 2 nooutput
tmax = STATS_max
minw = (tmax - tmin) / 500
# short runs read better in milliseconds
if (tmax < 1) { ts = 1000; tunit = "ms" } else { ts = 1; tunit = "s" }
if (note ne "") { set title title."\n".note } else { set title title }
set xlabel "time since start (".tunit.")"
set ylabel "address (MiB, empty ranges squeezed out)"
set grid lc rgb "#eeeeee"
set key off
stats data using 3 nooutput
# many small boxes: borders would paint them black
if (STATS_records > 200) { set style fill solid 1.0 noborder } \
else { set style fill solid 0.6 border lc rgb "#333333" }
set palette defined (0 "#4a7ebb", 1 "#2ca02c", 2 "#ff7f0e", 3 "#9467bd", 4 "#8c564b", 5 "#d62728")
set cbrange [0:5]
unset colorbox
# neighbours get different colours, so that touching boxes stay apart
end(a, b) = (b - a < minw) ? a + minw : b
plot data using (($1+end($1,$2))/2*ts):(($3+$4)/2):($1*ts):(end($1,$2)*ts):3:4:(int($0) % 6) with boxxyerror lc palette
