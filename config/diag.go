package config

import (
	"fmt"
	"slices"

	"github.com/droverhq/drover/internal/diag"
)

// Location is where a field was given: a file position (Line and Column
// start at 1), or a flag ("-data-dir", Line 0), or nothing (a default).
// String formats it as FILE:LINE:COL, FILE when the line is unknown, or ""
// for a default.
type Location = diag.Location

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
func (e *Errors) Error() string { return diag.Lines(e.Diagnostics) }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *Errors) Unwrap() error { return ErrInvalid }

// report collects errors and warnings, dropping exact duplicates.
type report struct {
	errs, warns []Diagnostic
	dedup       diag.Dedup[Diagnostic]
}

func (r *report) errorf(at Location, field, format string, args ...any) {
	r.dedup.Add(&r.errs, Diagnostic{Location: at, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (r *report) warnf(at Location, field, format string, args ...any) {
	r.dedup.Add(&r.warns, Diagnostic{Location: at, Field: field, Message: fmt.Sprintf(format, args...)})
}

// result sorts the diagnostics and returns the warnings and, when there
// are errors, an *Errors.
func (r *report) result() ([]Warning, error) {
	diag.Sort(r.errs, Diagnostic.location)
	diag.Sort(r.warns, Diagnostic.location)
	if len(r.errs) > 0 {
		return r.warns, &Errors{Diagnostics: r.errs}
	}
	return r.warns, nil
}

func (d Diagnostic) location() Location { return d.Location }

// suggest returns ` (did you mean "x"?)` when one of known is close to
// name, or "". Of equally close names the first in sorted order wins.
func suggest(name string, known []string) string {
	best := diag.Closest(name, slices.Sorted(slices.Values(known)), 1+len(name)/3)
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
