package cmdutil

import (
	"time"

	"github.com/osb-dev/osb/internal/client"
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

// NewPaginationView converts the wire pagination block.
func NewPaginationView(p client.Pagination) PaginationView {
	return PaginationView{Page: p.Page, PageSize: p.PageSize, TotalItems: p.TotalItems,
		TotalPages: p.TotalPages, HasNextPage: p.HasNextPage}
}

// Timestamp renders a time as osb prints every timestamp: RFC 3339 in UTC,
// with a fraction only when it is not zero. Unset (nil or zero) is nil.
func Timestamp(t *time.Time) *string {
	if t == nil || t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
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
