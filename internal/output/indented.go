package output

// Indented is JSON already written at the depth of a StreamedList's items
// (as AppendItem writes it): added as a *Indented, the list writes its
// bytes as they are. They need only last until add returns (a list
// gathered first copies them), so the caller may reuse them.
type Indented []byte

// MarshalJSON lets a list that is gathered first hold it.
func (b Indented) MarshalJSON() ([]byte, error) { return b, nil }

// ItemSep is what comes between two items of a StreamedList.
const ItemSep = ",\n    "

// IndentedRun is items of a StreamedList written as Indented, one after
// another with ItemSep between them; Ends says where each ends in JSON.
// Added as a *IndentedRun, the list writes them with one write: a listing
// of every sandbox adds a page of records at a time, not each record in
// turn. Like Indented, they need only last until add returns.
type IndentedRun struct {
	JSON []byte
	Ends []int
	// Room is how many bytes before the first item in JSON are free. With
	// room for ItemSep the list writes what comes before the run there,
	// and run and separator go out in one write rather than two.
	Room int
}

// each calls fn with each item of the run.
func (r *IndentedRun) each(fn func(Indented)) {
	start := r.Room
	for _, end := range r.Ends {
		fn(Indented(r.JSON[start:end]))
		start = end + len(ItemSep)
	}
}
