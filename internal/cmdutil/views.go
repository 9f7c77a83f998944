package cmdutil

import (
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/output"
)

// PaginationView is a list response's page information as osb prints it:
// the official client's snake_case keys.
type PaginationView struct {
	Page        int  `json:"page"`
	PageSize    int  `json:"page_size"`
	TotalItems  int  `json:"total_items"`
	TotalPages  int  `json:"total_pages"`
	HasNextPage bool `json:"has_next_page"`
}

// newPaginationView converts the wire pagination block.
func newPaginationView(p client.Pagination) PaginationView {
	return PaginationView{Page: p.Page, PageSize: p.PageSize, TotalItems: p.TotalItems,
		TotalPages: p.TotalPages, HasNextPage: p.HasNextPage}
}

// StatusView is the status of a sandbox or a snapshot as osb prints it.
type StatusView struct {
	State            string  `json:"state"`
	Reason           *string `json:"reason"`
	Message          *string `json:"message"`
	LastTransitionAt *string `json:"last_transition_at"`
}

// NewStatusView converts the wire status.
func NewStatusView(s client.Status) StatusView {
	return StatusView{State: s.State, Reason: s.Reason, Message: s.Message, LastTransitionAt: Timestamp(s.LastTransitionAt)}
}

// AppendDetails ends a record with the status reason and message, when
// they say anything: a table shows the status as its state alone.
func (s StatusView) AppendDetails(record output.Obj) output.Obj {
	if r := s.Reason; r != nil && *r != "" {
		record = append(record, output.KV{Key: "status_reason", Value: *r})
	}
	if m := s.Message; m != nil && *m != "" {
		record = append(record, output.KV{Key: "status_message", Value: *m})
	}
	return record
}

// ListView is one page of a list command as osb prints it under json and
// yaml: the items, then the page information.
type ListView[T any] struct {
	Items      []T            `json:"items"`
	Pagination PaginationView `json:"pagination"`
}

// NewListView converts a wire page, each item with view. Items is never nil,
// so an empty page prints "items": [] rather than null.
func NewListView[W, T any](page *client.Page[W], view func(*W) T) ListView[T] {
	out := ListView[T]{Items: make([]T, len(page.Items)), Pagination: newPaginationView(page.Pagination)}
	for i := range page.Items {
		out.Items[i] = view(&page.Items[i])
	}
	return out
}

// Print shows the page: the view itself under json and yaml; else a table
// titled title with one row per item (row makes it, columns pick its keys),
// or the note empty when there are no items.
func (v ListView[T]) Print(p *output.Printer, title string, columns []string, row func(T) output.Obj, empty string) error {
	if p.Structured() {
		return p.Data(v)
	}
	if len(v.Items) == 0 {
		return p.Info(empty)
	}
	rows := make([]output.Obj, len(v.Items))
	for i, item := range v.Items {
		rows[i] = row(item)
	}
	return p.List(title, columns, rows)
}

// PrintRecord shows one record: view itself under json and yaml, else
// record, its table form (flattened, unset values nil), as a key/value table.
func PrintRecord(p *output.Printer, title string, view any, record output.Obj) error {
	if p.Structured() {
		return p.Data(view)
	}
	return p.Object(title, record)
}

// FormatTime renders a time as osb prints every timestamp: RFC 3339 in UTC,
// with a fraction only when it is not zero.
func FormatTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// Timestamp is FormatTime for an optional time: unset (nil or zero) is nil.
func Timestamp(t *time.Time) *string {
	if t == nil || t.IsZero() {
		return nil
	}
	s := FormatTime(*t)
	return &s
}

// Optional turns an unset pointer into a plain nil (shown as "-" in tables)
// and a set one into its value.
func Optional[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// OptionalMap turns a nil map into a plain nil, shown as "-" in tables like
// an unset pointer (a nil map kept in an any is not nil).
func OptionalMap[M ~map[K]V, K comparable, V any](m M) any {
	if m == nil {
		return nil
	}
	return m
}

// OptionalList is OptionalMap for a slice.
func OptionalList[S ~[]E, E any](s S) any {
	if s == nil {
		return nil
	}
	return s
}

// CheckPageFlags rejects --page and --page-size values below 1 when they
// were given, before any request.
func CheckPageFlags(pageSet bool, page int, sizeSet bool, size int) error {
	if pageSet && page < 1 {
		return UsageErrorf("--page must be at least 1, got %d", page)
	}
	if sizeSet && size < 1 {
		return UsageErrorf("--page-size must be at least 1, got %d", size)
	}
	return nil
}
