package client

import (
	"context"
	"fmt"
	"hash/maphash"
)

// MaxPages bounds a walk over every page of a listing: a million records in
// pages of 200. A server still announcing more after that is looping.
const MaxPages = 5000

// PagingError is a listing osb stopped walking because the server's pages
// make no progress: a page repeated, a page number other than the one asked
// for, or more pages than MaxPages.
type PagingError struct{ Reason string }

func (e *PagingError) Error() string { return "stopped listing: " + e.Reason }

// lookahead is how many pages WalkPages asks for ahead of the one it hands
// over: the next one always (when there is one), further ones as far as the
// server's page count says they exist.
const lookahead = 3

// WalkPages calls fn with every page of a listing, from page 1 until the
// server says there is no next page. fetch gets one page; id names an item,
// to recognise a page the server sends again. The pages ahead are fetched
// while fn handles the current one, so the server, the decoding and fn
// work at the same time.
func WalkPages[T any](ctx context.Context, fetch func(ctx context.Context, page int) (*Page[T], error), id func(*T) string, fn func(*Page[T]) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type fetched struct {
		page *Page[T]
		err  error
	}
	type job struct {
		n  int
		ch chan fetched
	}
	// A few fetchers serve every page, rather than a goroutine each: each
	// would grow its stack again through the HTTP client and the reading.
	jobs := make(chan job, lookahead+1)
	defer close(jobs)
	for range lookahead + 1 {
		go func() {
			for j := range jobs {
				p, err := fetch(ctx, j.n)
				j.ch <- fetched{p, err}
			}
		}()
	}
	start := func(n int) <-chan fetched {
		ch := make(chan fetched, 1)
		jobs <- job{n, ch}
		return ch
	}
	seed := maphash.MakeSeed()
	seen := map[uint64]int{} // the ids of each page so far → its number
	pending := map[int]<-chan fetched{1: start(1)}
	for n := 1; ; n++ {
		got := <-pending[n]
		delete(pending, n)
		if got.err != nil {
			return got.err
		}
		page := got.page
		if p := page.Pagination.Page; p != 0 && p != n {
			return &PagingError{Reason: fmt.Sprintf("asked for page %d, the server sent page %d", n, p)}
		}
		if len(page.Items) > 0 {
			var h maphash.Hash
			h.SetSeed(seed)
			for i := range page.Items {
				h.WriteString(id(&page.Items[i]))
				h.WriteByte(0)
			}
			if earlier, ok := seen[h.Sum64()]; ok {
				return &PagingError{Reason: fmt.Sprintf("page %d holds the same records as page %d, and the server announces more", n, earlier)}
			}
			seen[h.Sum64()] = n
		}
		more := page.Pagination.HasNextPage && len(page.Items) > 0
		for k := n + 1; more && k <= min(n+lookahead, MaxPages); k++ {
			if k > n+1 && k > page.Pagination.TotalPages {
				break
			}
			if pending[k] == nil {
				pending[k] = start(k)
			}
		}
		if err := fn(page); err != nil {
			return err
		}
		switch {
		case !more:
			return nil
		case n >= MaxPages:
			return &PagingError{Reason: fmt.Sprintf("the server still announces more after %d pages", MaxPages)}
		}
	}
}
