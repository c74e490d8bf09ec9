package jobspec

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/agext/levenshtein"
)

// ErrInvalid is what every *Errors matches with errors.Is: the job file or
// API job is invalid.
var ErrInvalid = errors.New("invalid job")

// Diagnostic is one located problem of a job. File is the file name (or the
// JSON path of an API job), Line and Column start at 1 (0 when unknown), and
// Field names the attribute or block concerned as the message does.
type Diagnostic struct {
	File    string
	Line    int
	Column  int
	Field   string
	Message string
}

// String formats the diagnostic as "FILE:LINE:COL: message"; LINE and COL
// are left out when unknown.
func (d Diagnostic) String() string {
	if d.Line == 0 {
		return fmt.Sprintf("%s: %s", d.File, d.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Column, d.Message)
}

// Errors is every problem of an invalid job, in file order.
type Errors struct {
	Diagnostics []Diagnostic
}

// Error returns one Diagnostic.String() per line.
func (e *Errors) Error() string {
	lines := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *Errors) Unwrap() error { return ErrInvalid }

// loc is where a field is written, and how messages name it.
type loc struct {
	File   string
	Line   int
	Column int
	Field  string
}

// named returns the same place under another field name.
func (l loc) named(field string) loc { l.Field = field; return l }

// report collects errors and warnings, dropping exact duplicates (a
// job-level update value copied into every group is reported once).
type report struct {
	errs  []Diagnostic
	warns []Diagnostic
	seen  map[Diagnostic]bool
}

func (r *report) add(list *[]Diagnostic, l loc, format string, args ...any) {
	d := Diagnostic{File: l.File, Line: l.Line, Column: l.Column, Field: l.Field, Message: fmt.Sprintf(format, args...)}
	if r.seen == nil {
		r.seen = map[Diagnostic]bool{}
	}
	if r.seen[d] {
		return
	}
	r.seen[d] = true
	*list = append(*list, d)
}

func (r *report) errorf(l loc, format string, args ...any) { r.add(&r.errs, l, format, args...) }
func (r *report) warnf(l loc, format string, args ...any)  { r.add(&r.warns, l, format, args...) }

// result sorts the diagnostics and returns the warnings and, when there
// are errors, an *Errors.
func (r *report) result() ([]Diagnostic, error) {
	sortDiags(r.errs)
	sortDiags(r.warns)
	if len(r.errs) > 0 {
		return r.warns, &Errors{Diagnostics: r.errs}
	}
	return r.warns, nil
}

func sortDiags(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

// suggest returns ` (did you mean "x"?)` when a known name is close to
// name, or "".
func suggest(name string, known []string) string {
	best, bestDist := "", 0
	if len(name) > 64 {
		return ""
	}
	for _, k := range known {
		d := levenshtein.Distance(name, k, nil)
		if d <= 2+len(name)/5 && (best == "" || d < bestDist) {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
