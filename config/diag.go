package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agext/levenshtein"
)

// Location is where a field was given: a file position (Line and Column
// start at 1), or a flag ("-data-dir", Line 0), or nothing (a default).
type Location struct {
	File   string
	Line   int
	Column int
}

// String formats the location as FILE:LINE:COL, FILE when the line is
// unknown, or "" for a default.
func (l Location) String() string {
	if l.Line == 0 {
		return l.File
	}
	return fmt.Sprintf("%s:%d:%d", l.File, l.Line, l.Column)
}

// Diagnostic is one problem of a configuration: where, which field
// ("server.bootstrap_expect"), and a message that names the field.
type Diagnostic struct {
	Location
	Field   string
	Message string
}

// Warning is a Diagnostic that does not make the configuration invalid.
type Warning = Diagnostic

// String formats the diagnostic as "FILE:LINE:COL: message", or only the
// message when it has no location.
func (d Diagnostic) String() string {
	if at := d.Location.String(); at != "" {
		return at + ": " + d.Message
	}
	return d.Message
}

// Errors is every problem of an invalid configuration, in file order.
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

// report collects errors and warnings, dropping exact duplicates.
type report struct {
	errs, warns []Diagnostic
	seen        map[Diagnostic]bool
}

func (r *report) add(list *[]Diagnostic, at Location, field, format string, args ...any) {
	d := Diagnostic{Location: at, Field: field, Message: fmt.Sprintf(format, args...)}
	if r.seen == nil {
		r.seen = map[Diagnostic]bool{}
	}
	if !r.seen[d] {
		r.seen[d] = true
		*list = append(*list, d)
	}
}

func (r *report) errorf(at Location, field, format string, args ...any) {
	r.add(&r.errs, at, field, format, args...)
}

func (r *report) warnf(at Location, field, format string, args ...any) {
	r.add(&r.warns, at, field, format, args...)
}

// result sorts the diagnostics and returns the warnings and, when there
// are errors, an *Errors.
func (r *report) result() ([]Warning, error) {
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

// suggest returns ` (did you mean "x"?)` when one of known is close to
// name, or "".
func suggest(name string, known []string) string {
	best, bestDist := "", 0
	for _, k := range known {
		d := levenshtein.Distance(name, k, nil)
		if d <= 1+len(name)/3 && (best == "" || d < bestDist || (d == bestDist && k < best)) {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
