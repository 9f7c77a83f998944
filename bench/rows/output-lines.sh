# Row output-raw over the bytes base64 would print, as 76-byte lines of
# zeros (yes): they cost next to nothing to make, so the row times the
# stream, where base64 of random bytes spends about as much CPU making
# its output as the stream spends moving it.
lines=zeros
. "$rows_dir/output-raw.sh"
