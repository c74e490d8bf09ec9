package jobspec

import (
	"errors"
	"fmt"

	"github.com/droverhq/drover/internal/diag"
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
func (d Diagnostic) String() string { return d.location().String() + ": " + d.Message }

func (d Diagnostic) location() diag.Location {
	return diag.Location{File: d.File, Line: d.Line, Column: d.Column}
}

// Errors is every problem of an invalid job, in file order.
type Errors struct {
	Diagnostics []Diagnostic
}

// Error returns one Diagnostic.String() per line.
func (e *Errors) Error() string { return diag.Lines(e.Diagnostics) }

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
	dedup diag.Dedup[Diagnostic]
}

func (r *report) add(list *[]Diagnostic, l loc, format string, args ...any) {
	r.dedup.Add(list, Diagnostic{File: l.File, Line: l.Line, Column: l.Column, Field: l.Field, Message: fmt.Sprintf(format, args...)})
}

func (r *report) errorf(l loc, format string, args ...any) { r.add(&r.errs, l, format, args...) }
func (r *report) warnf(l loc, format string, args ...any)  { r.add(&r.warns, l, format, args...) }

// result sorts the diagnostics and returns the warnings and, when there
// are errors, an *Errors.
func (r *report) result() ([]Diagnostic, error) {
	diag.Sort(r.errs, Diagnostic.location)
	diag.Sort(r.warns, Diagnostic.location)
	if len(r.errs) > 0 {
		return r.warns, &Errors{Diagnostics: r.errs}
	}
	return r.warns, nil
}

// suggest returns ` (did you mean x?)` when a known name is close to
// name, or "". Of equally close names the first in known wins; names
// longer than 64 bytes get no suggestion.
func suggest(name string, known []string) string {
	if len(name) > 64 {
		return ""
	}
	best := diag.Closest(name, known, 2+len(name)/5)
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
