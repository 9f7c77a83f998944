# Row list-10k over 20,000 records.
records=20000
. "$rows_dir/list-10k.sh"
