# prom_check FILE: the Prometheus text format as `ntprof record --metrics`
# writes it (docs/recording.md, "Prometheus"), checked line by line with awk
# (the guest has no promtool): HELP and TYPE once per family and before its
# samples, sample lines name{label="value",...} number, counters ending in
# _total and gauges not, no series twice, the file ending in a whole line.
# Prints nothing and returns 0, or prints the first fault and returns 1.
prom_check() {
	[ -s "$1" ] || { echo "$1: empty or missing"; return 1; }
	[ -z "$(tail -c 1 "$1")" ] || { echo "$1: the last line is cut"; return 1; }
	awk '
	function bad(why) { print FILENAME ":" NR ": " why ": " $0; err = 1; exit 1 }
	/^# HELP / { if (help[$3]++) bad("HELP twice"); next }
	/^# TYPE / {
		if (type[$3] != "") bad("TYPE twice")
		if ($4 != "gauge" && $4 != "counter") bad("unknown type")
		if (($4 == "counter") != ($3 ~ /_total$/)) bad("a counter ends in _total, a gauge does not")
		type[$3] = $4; next
	}
	/^#/ { bad("unknown comment") }
	{
		line = $0
		if (!match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) bad("no metric name")
		name = substr(line, 1, RLENGTH); rest = substr(line, RLENGTH + 1)
		if (type[name] == "" || !help[name]) bad("a sample before its HELP and TYPE")
		if (substr(rest, 1, 1) == "{") {
			rest = substr(rest, 2)
			while (substr(rest, 1, 1) != "}") {
				if (!match(rest, /^[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*"/)) bad("bad label")
				rest = substr(rest, RLENGTH + 1)
				if (substr(rest, 1, 1) == ",") rest = substr(rest, 2)
				else if (substr(rest, 1, 1) != "}") bad("bad label list")
			}
			rest = substr(rest, 2)
		}
		if (rest !~ /^ -?[0-9.]+([eE][-+]?[0-9]+)?$/) bad("bad value")
		series = substr(line, 1, length(line) - length(rest))
		if (seen[series]++) bad("a series twice")
	}
	END { exit err }' "$1"
}
