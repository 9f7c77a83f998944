# Row output-raw with -o json: JSON lines, one event a line.
format=json
. "$rows_dir/output-raw.sh"
