package main

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"
)

// Nomad's -per-page and -page-token, for the lists drover's servers answer
// whole: the CLI pages the answer itself, by the same key the list is
// sorted by, so that a script that pages through Nomad's answers pages
// through drover's the same way. The token is the key of the first item
// of the next page.

// pageFlags are -per-page and -page-token, and -filter (filter.go).
type pageFlags struct {
	perPage int
	token   string
	filter  string
}

// addFilter adds Nomad's -filter.
func (p *pageFlags) addFilter(cmd *cobra.Command) {
	cmd.Flags().StringVar(&p.filter, "filter", "", `keep the items a Nomad filter expression selects ('Status == "ready"')`)
}

func (p *pageFlags) add(cmd *cobra.Command) {
	cmd.Flags().IntVar(&p.perPage, "per-page", 0, "how many items to print (0: all)")
	cmd.Flags().StringVar(&p.token, "page-token", "", "the page to print, as the previous page's Next page token says")
}

// pageOf returns the page of items (sorted by key) that p asks for, and
// the token of the next page ("" at the end).
func pageOf[T any](p pageFlags, items []T, key func(T) string) ([]T, string) {
	sorted := append([]T(nil), items...)
	sort.SliceStable(sorted, func(i, j int) bool { return key(sorted[i]) < key(sorted[j]) })
	start := 0
	if p.token != "" {
		start = sort.Search(len(sorted), func(i int) bool { return key(sorted[i]) >= p.token })
	}
	sorted = sorted[start:]
	if p.perPage <= 0 || len(sorted) <= p.perPage {
		return sorted, ""
	}
	return sorted[:p.perPage], key(sorted[p.perPage])
}

// warnNextPage prints the next page's token on stderr, as Nomad's var
// list does, so that what stdout carries stays the list.
func warnNextPage(cmd *cobra.Command, next string) {
	if next != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "Next page token: %s\n", next)
	}
}
