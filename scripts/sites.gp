# sites.gp - the sites holding the most memory of one device at its peak,
# as horizontal bars, largest on top.
#
#   gnuplot -c scripts/sites.gp DATA.tsv OUT.png [TITLE]
#
# DATA.tsv: label MiB (largest first); a label is the site's main frame,
#   "< ... <" the frames two sites share, then the frame that tells them apart
data = ARG1
out = ARG2
title = (ARGC >= 3) ? ARG3 : "top sites at the peak"
set datafile separator "\t"
stats data using (strlen(strcol(1))) nooutput
lw = STATS_max
stats data using 2 nooutput
n = STATS_records
if (out[strlen(out)-2:] eq "svg") { set terminal svg noenhanced size 1200,(150 + 40 * n) dynamic font "sans,11" } \
else { set terminal pngcairo noenhanced size 1200,(150 + 40 * n) font "sans,10" }
set output out
set title title
set xlabel "MiB live at the peak"
set datafile separator "\t"
set style fill solid 0.7 noborder
set yrange [n - 0.5:-0.5]
set xrange [0:STATS_max * 1.25]
# room for the longest label (a site and the caller that tells it apart)
set lmargin (lw < 20 ? 20 : lw) + 2
set grid xtics lc rgb "#dddddd"
set key off
plot data using ($2/2):0:($2/2):(0.35):ytic(1) with boxxyerror lc rgb "#4a7ebb", \
     data using 2:0:(sprintf(" %.1f", $2)) with labels left
