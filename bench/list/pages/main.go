// Command pages serves GET /v1/sandboxes from pages rendered before it
// listens: N copies of one sandbox record (fresh ids), paged as the
// lifecycle server pages them (pageSize at most 200). A client and curl
// reading its pages then measure themselves, not a server building pages.
//
//	pages RECORD.json N   # prints its address, then serves until killed
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
)

const maxPageSize = 200

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: pages RECORD.json N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 0 {
		fmt.Fprintln(os.Stderr, "pages: N is a number of records")
		os.Exit(2)
	}
	record, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "pages:", err)
		os.Exit(1)
	}
	rendered := map[[2]int][]byte{}
	for _, size := range []int{maxPageSize, 20} {
		for page := 1; (page-1)*size < max(n, 1); page++ {
			rendered[[2]int{page, size}] = render(record, n, page, size)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "pages:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	http.HandleFunc("GET /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
		page, size := number(r, "page", 1), min(number(r, "pageSize", 20), maxPageSize)
		body, ok := rendered[[2]int{page, size}]
		if !ok {
			body = render(record, n, page, size)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	fmt.Fprintln(os.Stderr, "pages:", http.Serve(ln, nil))
	os.Exit(1)
}

// render is one page of the listing, as JSON with the record's fields as
// they came and a fresh id for each copy.
func render(record []byte, n, page, size int) []byte {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(record, &fields); err != nil {
		fmt.Fprintln(os.Stderr, "pages: the record is not a JSON object:", err)
		os.Exit(1)
	}
	lo, hi := min((page-1)*size, n), min(page*size, n)
	items := make([]map[string]json.RawMessage, 0, hi-lo)
	for i := lo; i < hi; i++ {
		item := make(map[string]json.RawMessage, len(fields))
		for k, v := range fields {
			item[k] = v
		}
		item["id"], _ = json.Marshal(fmt.Sprintf("%032x", i+1))
		items = append(items, item)
	}
	body, _ := json.Marshal(map[string]any{"items": items, "pagination": map[string]any{
		"page": page, "pageSize": size, "totalItems": n, "totalPages": (n + size - 1) / size, "hasNextPage": hi < n}})
	return append(body, '\n')
}

func number(r *http.Request, name string, def int) int {
	if n, err := strconv.Atoi(r.URL.Query().Get(name)); err == nil && n > 0 {
		return n
	}
	return def
}
