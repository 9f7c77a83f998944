package ops

import (
	"fmt"

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

// StatusView is the status of a sandbox or a snapshot as osb prints it. A
// table shows it as its state, its reason and message as rows of their own.
type StatusView struct {
	State            string       `json:"state"`
	Reason           *string      `json:"reason"`
	Message          *string      `json:"message"`
	LastTransitionAt *client.Time `json:"last_transition_at"`
}

// NewStatusView converts the wire status.
func NewStatusView(s client.Status) StatusView {
	return StatusView{State: s.State, Reason: s.Reason, Message: s.Message, LastTransitionAt: s.LastTransitionAt}
}

// TableCell is the state.
func (s StatusView) TableCell() any { return s.State }

// TableDetails are the reason and message, when they say anything.
func (s StatusView) TableDetails() output.Obj {
	var o output.Obj
	if r := s.Reason; r != nil && *r != "" {
		o = append(o, output.KV{Key: "status_reason", Value: *r})
	}
	if m := s.Message; m != nil && *m != "" {
		o = append(o, output.KV{Key: "status_message", Value: *m})
	}
	return o
}

// ListView is one page of a list command as osb prints it under json and
// yaml: the items, then the page information.
type ListView[T any] struct {
	Items      []T            `json:"items"`
	Pagination PaginationView `json:"pagination"`
	// More ends the note that more pages exist, e.g. with another way to
	// get them.
	More string `json:"-"`
}

// NewListView converts a wire page, each item with view. Items is never nil,
// so an empty page prints "items": [] rather than null.
func NewListView[W, T any](page *client.Page[W], view func(*W) T) ListView[T] {
	p := page.Pagination
	out := ListView[T]{Items: make([]T, len(page.Items)), Pagination: PaginationView{Page: p.Page, PageSize: p.PageSize,
		TotalItems: p.TotalItems, TotalPages: p.TotalPages, HasNextPage: p.HasNextPage}}
	for i := range page.Items {
		out.Items[i] = view(&page.Items[i])
	}
	return out
}

// Print shows the page: the view itself under json and yaml; else a table
// titled title with the item view's columns, or the note empty when there
// are no items. When the server has more pages, a table is followed by a
// note on stderr saying how to get them.
func (v ListView[T]) Print(p *output.Printer, title, empty string) error {
	if p.Structured() {
		return p.Data(v)
	}
	var err error
	if len(v.Items) == 0 {
		err = p.Info(empty)
	} else {
		err = p.List(title, v.Items)
	}
	if err == nil && v.Pagination.HasNextPage {
		p.Note(v.moreNote())
	}
	return err
}

func (v ListView[T]) moreNote() string {
	pg := v.Pagination
	msg := fmt.Sprintf("Page %d", pg.Page)
	if pg.TotalPages > 0 {
		msg += fmt.Sprintf(" of %d", pg.TotalPages)
	}
	if pg.TotalItems > 0 {
		msg += fmt.Sprintf(" (%d in all)", pg.TotalItems)
	}
	return msg + fmt.Sprintf(": the next one with --page %d%s.", pg.Page+1, v.More)
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
