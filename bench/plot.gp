# Draws the routing benchmark plots from the data files bench/report.py writes.
# Called as: gnuplot -e "data='DIR'; out='DIR'; routers='A B ...'; requests='x y ...'" plot.gp
#   growth.png               match ns vs table size, one line per router (log-log: the
#                            routers differ by orders of magnitude)
#   growth-waypoint.png      waypoint alone, one line per request (log x, linear y)
#   registration.png         registration time vs routes, per router (log-log)

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 900,560 font "sans,10"
} else {
  set terminal png size 900,560
}
set termoption noenhanced  # request names hold underscores, not subscripts
set key outside right top
set grid
set logscale x 10
set xtics ("10" 10, "100" 100, "1,000" 1000, "10,000" 10000)
set xrange [7:14000]
set xlabel "routes in the table (first N of unique10k)"

set output out."/growth.png"
set logscale y 10
set ylabel "ns per match (geometric mean over the growth requests, median of repetitions)"
set title "Match cost as the table grows"
plot for [i=1:words(routers)] data."/growth.dat" using 1:(column(i+1)) with linespoints lw 2 title word(routers, i)

set output out."/growth-waypoint.png"
unset logscale y
set yrange [0:*]
set ylabel "ns per match (median of repetitions)"
set title "waypoint: match cost per request as the table grows"
# Eight colours repeat: the point shapes tell the second round apart.
plot for [i=1:words(requests)] data."/growth-waypoint.dat" using 1:(column(i+1)) with linespoints lw 2 lc i pt i title word(requests, i)

set output out."/registration.png"
set logscale y 10
set autoscale y
set ylabel "ms to register the whole table (thread CPU time)"
set title "Registration time as the table grows"
plot for [i=1:words(routers)] data."/registration.dat" using 1:(column(i+1)) with linespoints lw 2 title word(routers, i)
