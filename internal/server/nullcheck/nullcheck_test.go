package nullcheck

import (
	"fmt"
	"testing"
)

func TestPaths(t *testing.T) {
	for doc, want := range map[string]string{
		`{"a":1,"b":{"c":[1,null,{"d":null}]},"e":null}`: `["b.c[1]" "b.c[2].d" "e"]`,
		`null`: `["(the whole document)"]`,
		`{"detail":[{"loc":["body"],"input":null}]}`: `[]`, // FastAPI echoes the client's null
		`{"detail":[{"loc":null}]}`:                  `["detail[0].loc"]`,
		`{"ok":true}`:                                `[]`,
		`not json`:                                   `[]`,
	} {
		if got := fmt.Sprintf("%q", Paths([]byte(doc))); got != want {
			t.Errorf("%s: %s, want %s", doc, got, want)
		}
	}
}
