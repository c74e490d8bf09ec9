// Package diag holds the located diagnostics shared by drover's file
// parsers, the agent configuration (package config) and job files (package
// jobspec): where a problem is (FILE:LINE:COL), the sort into file order,
// the collector that reports each problem once, the one-per-line error text,
// and the lookup behind "did you mean …?".
//
// Each parser keeps its own Diagnostic and Errors types, since their shapes
// and sentinel errors are part of that parser's API; the helpers here are
// generic over them.
package diag

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agext/levenshtein"
)

// Location is a position in a file. Line and Column start at 1; Line is 0
// when only the file (or a flag name) is known, and File is "" as well when
// nothing is.
type Location struct {
	File   string
	Line   int
	Column int
}

// String formats the location as FILE:LINE:COL, FILE when the line is
// unknown, or "" when nothing is known.
func (l Location) String() string {
	if l.Line == 0 {
		return l.File
	}
	return fmt.Sprintf("%s:%d:%d", l.File, l.Line, l.Column)
}

// Sort puts ds in file order: by file, line and column, keeping the order in
// which they were reported otherwise. at returns where a diagnostic is.
func Sort[D any](ds []D, at func(D) Location) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := at(ds[i]), at(ds[j])
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

// Dedup drops exact duplicates from the diagnostics of a report. The zero
// value is ready to use.
type Dedup[D comparable] struct {
	seen map[D]bool
}

// Add appends d to *list unless an equal diagnostic was added before, to
// that list or another.
func (u *Dedup[D]) Add(list *[]D, d D) {
	if u.seen == nil {
		u.seen = map[D]bool{}
	}
	if u.seen[d] {
		return
	}
	u.seen[d] = true
	*list = append(*list, d)
}

// Lines returns one String() per line: the Error() text of a list of
// diagnostics.
func Lines[D fmt.Stringer](ds []D) string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Closest returns the name of known nearest to name by edit distance, if it
// is at most maxDist edits away, or "". Of equally near names the first in
// known wins.
func Closest(name string, known []string, maxDist int) string {
	best, bestDist := "", 0
	for _, k := range known {
		d := levenshtein.Distance(name, k, nil)
		if d <= maxDist && (best == "" || d < bestDist) {
			best, bestDist = k, d
		}
	}
	return best
}
