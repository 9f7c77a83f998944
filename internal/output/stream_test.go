package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzJSONString checks the piece-by-piece string writer against the
// encoder JSON uses, for any bytes cut anywhere.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"plain", "a\"b\\c\n\t\x00\x1f\x7f", "é😀\u2028\u2029", "caf\xe9 \xff\xfe", "\xe2\x82", "<&>"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, text []byte, step uint8) {
		want, err := marshal(string(text))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		s := NewJSONString(&b)
		n := max(int(step), 1)
		for rest := text; len(rest) > 0; {
			k := min(n, len(rest))
			s.Write(rest[:k])
			rest = rest[k:]
		}
		s.Close()
		if b.String() != string(want) {
			t.Fatalf("%q in steps of %d: got %s, want %s", text, n, b.String(), want)
		}
	})
}

// WriteJSON renders an object byte for byte as JSON does, with streamed
// strings and nested values alike.
func TestWriteJSONMatchesJSON(t *testing.T) {
	text := "line one\n\"two\"\t\xff" + string(bytes.Repeat([]byte("é"), 40000))
	streamed := Obj{{"id", "x"}, {"code", 3}, {"out", Streamed(func(w io.Writer) error {
		for i := 0; i < len(text); i += 7 {
			w.Write([]byte(text[i:min(i+7, len(text))]))
		}
		return nil
	})}, {"error", map[string]any{"name": "E", "traceback": []string{"a", "b"}, "empty": []string{}}}, {"none", nil}}
	plain := append(Obj{}, streamed...)
	plain[2].Value = text
	want, _ := JSON(plain)
	var got bytes.Buffer
	if err := WriteJSON(&got, streamed); err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Fatalf("got:\n%s\nwant:\n%s", got.String(), want)
	}
	if viaJSON, _ := JSON(streamed); string(viaJSON) != string(want) {
		t.Fatalf("JSON of a Streamed value:\n%s", viaJSON)
	}
	var empty bytes.Buffer
	WriteJSON(&empty, Obj{})
	if w, _ := JSON(Obj{}); empty.String() != string(w) {
		t.Fatalf("empty: %q, want %q", empty.String(), w)
	}
	// One write far larger than the pieces it is escaped in.
	big := strings.Repeat("é\"😀\n", 40000) + "\xff"
	var one bytes.Buffer
	WriteJSON(&one, Obj{{"out", Streamed(func(w io.Writer) error { _, err := w.Write([]byte(big)); return err })}})
	if w, _ := JSON(Obj{{"out", big}}); one.String() != string(w) {
		t.Fatalf("one large write differs")
	}
	if !utf8.ValidString(got.String()) {
		t.Fatal("invalid UTF-8 in the output")
	}
}

// A list written item by item is the list JSON renders, empty or not.
func TestWriteJSONStreamedList(t *testing.T) {
	items := []any{map[string]any{"id": "a", "tags": []string{"x"}}, Obj{{"id", "b"}, {"empty", map[string]any{}}}, 3}
	for _, n := range []int{0, 1, 3} {
		count := 0
		streamed := Obj{{"items", StreamedList(func(add func(any) error) error {
			for _, it := range items[:n] {
				count++
				if err := add(it); err != nil {
					return err
				}
			}
			return nil
		})}, {"count", countAfter{&count}}}
		var got bytes.Buffer
		if err := WriteJSON(&got, streamed); err != nil {
			t.Fatal(err)
		}
		want, _ := JSON(Obj{{"items", append([]any{}, items[:n]...)}, {"count", n}})
		if got.String() != string(want) {
			t.Errorf("%d items:\n%s\nwant:\n%s", n, got.String(), want)
		}
	}
}

// Items added as runs, one large enough to be written past the buffer,
// print as they would one by one, streamed or gathered.
func TestWriteJSONIndentedRun(t *testing.T) {
	var items []any
	for i := range 300 {
		items = append(items, map[string]any{"id": fmt.Sprint(i), "text": strings.Repeat("é<", 200), "tags": []string{}})
	}
	var run IndentedRun
	for _, it := range items[1:] {
		b, _ := marshal(it)
		if len(run.Ends) > 0 {
			run.JSON = append(run.JSON, ItemSep...)
		}
		run.JSON = indent(run.JSON, b, "    ", "  ")
		run.Ends = append(run.Ends, len(run.JSON))
	}
	obj := Obj{{"items", StreamedList(func(add func(any) error) error {
		for _, it := range []any{&IndentedRun{}, items[0], &run, &IndentedRun{}} {
			if err := add(it); err != nil {
				return err
			}
		}
		return nil
	})}}
	want, _ := JSON(Obj{{"items", items}})
	var got bytes.Buffer
	if err := WriteJSON(&got, obj); err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("streamed:\n%s", firstDiff(got.String(), string(want)))
	}
	if gathered, _ := JSON(obj); string(gathered) != string(want) {
		t.Errorf("gathered:\n%s", firstDiff(string(gathered), string(want)))
	}
}

// A run with room before its first item goes out with what comes before
// it (the list's opening or the separator) in one write.
func TestWriteJSONIndentedRunWithRoom(t *testing.T) {
	var items []any
	runs := []*IndentedRun{{}, {}}
	for i := range 100 {
		it := map[string]any{"id": fmt.Sprint(i), "text": strings.Repeat("x", 2000)}
		items = append(items, it)
		run := runs[i/50]
		if len(run.Ends) == 0 {
			run.Room = len(ItemSep)
			run.JSON = append(run.JSON, "??????"...)
		} else {
			run.JSON = append(run.JSON, ItemSep...)
		}
		b, _ := marshal(it)
		run.JSON = indent(run.JSON, b, "    ", "  ")
		run.Ends = append(run.Ends, len(run.JSON))
	}
	wants := []string{"[\n    " + string(runs[0].JSON[6:]), ItemSep + string(runs[1].JSON[6:])}
	obj := Obj{{"items", StreamedList(func(add func(any) error) error {
		for _, run := range runs {
			if err := add(run); err != nil {
				return err
			}
		}
		return nil
	})}}
	var w writeLog
	if err := WriteJSON(&w, obj); err != nil {
		t.Fatal(err)
	}
	if want, _ := JSON(Obj{{"items", items}}); w.all.String() != string(want) {
		t.Errorf("streamed:\n%s", firstDiff(w.all.String(), string(want)))
	}
	for i, want := range wants {
		if !slices.Contains(w.writes, want) {
			t.Errorf("run %d did not go out in one write with what comes before it; writes: %.60q", i, w.writes)
		}
	}
}

// writeLog keeps each write it gets.
type writeLog struct {
	all    bytes.Buffer
	writes []string
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return w.all.Write(p)
}

func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return fmt.Sprintf("at byte %d: %.80q, want %.80q", i, got[i:], want[i:])
}

// countAfter marshals the count a list reached before it.
type countAfter struct{ n *int }

func (c countAfter) MarshalJSON() ([]byte, error) { return marshal(*c.n) }

// FuzzIndent checks the layout of compact JSON against json.Indent.
func FuzzIndent(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"x\"y\\"},[],{}],"c":null}`, `[]`, `"s"`, `{"k":"a,b:{[c]}"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var v any
		if json.Unmarshal([]byte(src), &v) != nil {
			return
		}
		compact, err := marshal(v)
		if err != nil {
			return
		}
		var want bytes.Buffer
		json.Indent(&want, compact, "  ", "\t")
		if got := indent(nil, compact, "  ", "\t"); string(got) != want.String() {
			t.Fatalf("%s:\n%s\nwant:\n%s", compact, got, want.String())
		}
	})
}
