package output

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// A view is a struct whose json tags are the keys and the order of what a
// command prints, under json and yaml as in tables:
//
//   - a record table has one row per key, in field order;
//   - a list table has the columns whose fields carry a `table:"N"` tag,
//     in the order of N;
//   - a field whose value is a TableCeller is shown in tables as its
//     TableCell (a status as its state), and a TableDetailer adds rows at
//     the end of a record (the status reason and message);
//   - `omitempty` leaves a key out of every format when it is empty.

// TableCeller is a nested value that a table shows as one cell.
type TableCeller interface{ TableCell() any }

// TableDetailer is a nested value that adds rows at the end of a record.
type TableDetailer interface{ TableDetails() Obj }

// viewField is one key of a view.
type viewField struct {
	key       string
	index     int
	omitEmpty bool
	column    int // position in list tables; 0: not a column
}

func viewFields(t reflect.Type) []viewField {
	var out []viewField
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		f := viewField{key: name, index: i, omitEmpty: slices.Contains(strings.Split(opts, ","), "omitempty")}
		if n, err := strconv.Atoi(sf.Tag.Get("table")); err == nil {
			f.column = n
		}
		out = append(out, f)
	}
	return out
}

// structOf returns v as a struct value, following pointers; ok is false
// for anything else.
func structOf(v any) (reflect.Value, bool) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	return rv, rv.Kind() == reflect.Struct
}

// viewObj is a view as an ordered object for tables: nested values shown
// through TableCell, details added last.
func viewObj(rv reflect.Value) Obj {
	var o, details Obj
	for _, f := range viewFields(rv.Type()) {
		fv := rv.Field(f.index)
		if f.omitEmpty && fv.IsZero() {
			continue
		}
		v := fv.Interface()
		if d, ok := v.(TableDetailer); ok {
			details = append(details, d.TableDetails()...)
		}
		o = append(o, KV{f.key, tableValue(v)})
	}
	return append(o, details...)
}

func tableValue(v any) any {
	if c, ok := v.(TableCeller); ok {
		return c.TableCell()
	}
	return v
}

// listColumns are the keys of a view's `table` tagged fields, in tag order.
func listColumns(t reflect.Type) []string {
	fields := slices.DeleteFunc(viewFields(t), func(f viewField) bool { return f.column == 0 })
	slices.SortStableFunc(fields, func(a, b viewField) int { return a.column - b.column })
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	return keys
}

// elemType is the struct type of a slice's elements, or nil.
func elemType(items any) reflect.Type {
	t := reflect.TypeOf(items)
	if t == nil || t.Kind() != reflect.Slice {
		return nil
	}
	t = t.Elem()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

// Fields is a view (or any record) as an ordered object: its keys and
// their table values.
func Fields(v any) (Obj, error) { return toObj(v) }

// toObj turns a record into an ordered object: a view through its fields,
// an Obj as it is, anything else through its JSON form.
func toObj(v any) (Obj, error) {
	if o, ok := v.(Obj); ok {
		return o, nil
	}
	if rv, ok := structOf(v); ok {
		return viewObj(rv), nil
	}
	b, err := marshal(v)
	if err != nil {
		return nil, err
	}
	var o Obj
	err = forEachKey(b, func(k string, raw json.RawMessage) { o = append(o, KV{k, raw}) })
	return o, err
}

// toObjs turns a list of records into ordered objects.
func toObjs(items any) ([]Obj, error) {
	if objs, ok := items.([]Obj); ok {
		return objs, nil
	}
	rv := reflect.ValueOf(items)
	if rv.Kind() != reflect.Slice {
		return nil, errNotList(items)
	}
	objs := make([]Obj, rv.Len())
	for i := range objs {
		o, err := toObj(rv.Index(i).Interface())
		if err != nil {
			return nil, err
		}
		objs[i] = o
	}
	return objs, nil
}
