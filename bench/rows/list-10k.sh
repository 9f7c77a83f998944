# `sandbox list --all` over 10,000 records (list-20k: 20,000): more live
# sandboxes than a shared machine can hold, so they come from
# bench/listing, which serves copies of a real record from pages rendered
# before the runs.
records=${records:-10000}
title="\`sandbox list --all -o json\`, $records records"
baseline='one curl fetching every page of 200'
setup() { listing_setup "$records"; }
run_osb() { "$osb" --domain "$listing" sandbox list --all -o json; }
run_baseline() { curl -fsS "http://$listing/v1/sandboxes?pageSize=200&page=[1-$pages]"; }
note() {
	local n
	n=$("$osb" --domain "$listing" sandbox list --all -q 'items.#')
	[ "$n" = "$records" ] || { echo "osb listed $n of $records" >&2; return 1; }
	echo "$pages pages; osb listed all $n"
}
teardown() { kill "$listing_pid"; }
