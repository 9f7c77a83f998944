# Server: create-host's creates back to back, each right after the last
# (and its baseline): a create may find the spare sandbox still being made
# and wait for it, and the server makes the next while the runs go on.
. "$(dirname "${BASH_SOURCE[0]}")/create-host.sh"
title='server: create, host programs, back to back (curl POST)'
settle=0
