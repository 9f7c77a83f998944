# bench/pairs.sh: two commands timed in turn, A B A B …, in one run, so
# that a machine whose speed drifts slows both alike. Source it after
# bench/lib.sh.
#
#   pair_row NAME RUNS 'COMMAND A' 'COMMAND B' [BEFORE]
#
# runs each command RUNS times (after one untimed warm-up of each), every
# run under /usr/bin/time, BEFORE (a shell command, untimed) ahead of every
# run; the commands are split into words as a shell splits them, without a
# shell, their output thrown away. It prints one line:
#
#   row NAME runs N a_wall_ms W a_cpu_ms C a_rss_mib M b_wall_ms W b_cpu_ms C b_rss_mib M wall_ratio R cpu_ratio R
#
# medians of each figure (cpu = user + system, rss = peak resident set of
# the largest process), the ratios the median of the per-pair ratios A/B.
# A command that fails stops the row: the line then says "failed" with
# its exit code and the row is not printed.

# pair_time FILE CMD...: one timed run; FILE gets "wall user sys maxrss_kib".
pair_time() {
	local out=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$out" "$@" >/dev/null 2>"$out.err"
}

pair_row() {
	local name=$1 runs=$2 a=$3 b=$4 before=${5:-} i side cmd
	local -a words
	: >"$work/$name.a"
	: >"$work/$name.b"
	for i in $(seq 0 "$runs"); do
		for side in a b; do
			[ "$side" = a ] && cmd=$a || cmd=$b
			read -r -a words <<<"$cmd"
			[ -n "$before" ] && eval "$before"
			if ! pair_time "$work/$name.t" "${words[@]}"; then
				echo "row $name failed: $cmd exited non-zero: $(tail -3 "$work/$name.t.err" | tr '\n' ' ')"
				return 1
			fi
			[ "$i" = 0 ] || cat "$work/$name.t" >>"$work/$name.$side"
		done
	done
	paste -d' ' "$work/$name.a" "$work/$name.b" | awk -v name="$name" '
		function median(v, n,   i, j, t) {
			for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
			return (n % 2) ? v[(n+1)/2] : (v[n/2] + v[n/2+1]) / 2
		}
		{
			n++
			aw[n] = $1 * 1000; ac[n] = ($2 + $3) * 1000; am[n] = $4 / 1024
			bw[n] = $5 * 1000; bc[n] = ($6 + $7) * 1000; bm[n] = $8 / 1024
			rw[n] = ($5 > 0) ? $1 / $5 : 0; rc[n] = ($6 + $7 > 0) ? ($2 + $3) / ($6 + $7) : 0
		}
		END {
			printf "row %s runs %d a_wall_ms %.0f a_cpu_ms %.0f a_rss_mib %.1f b_wall_ms %.0f b_cpu_ms %.0f b_rss_mib %.1f wall_ratio %.2f cpu_ratio %.2f\n",
				name, n, median(aw, n), median(ac, n), median(am, n), median(bw, n), median(bc, n), median(bm, n), median(rw, n), median(rc, n)
		}'
}
