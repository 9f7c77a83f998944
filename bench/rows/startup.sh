# Start-up: a process that prints its version and exits.
title='start-up (`osb --version`)'
baseline='`curl --version`'
runs=$((RUNS * 4))
run_osb() { "$osb" --version; }
run_baseline() { curl --version; }
