package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/state"
)

// CodedError is an error with the HTTP status it answers with.
type CodedError struct {
	Code int
	Msg  string
	Err  error // optional cause, for errors.Is
}

// Error returns the message.
func (e *CodedError) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *CodedError) Unwrap() error { return e.Err }

// Errorf returns a CodedError with a formatted message; a %w operand
// becomes the cause.
func Errorf(code int, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &CodedError{Code: code, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// statusFor picks the status for an error returned by a handler: a
// CodedError's own code, 4xx for the lower packages' rejections of the
// request, 500 for everything else (real faults, and no leader).
func statusFor(err error) int {
	var ce *CodedError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ce):
		return ce.Code
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, state.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, state.ErrInvalid), errors.Is(err, state.ErrDeploymentTerminal),
		errors.Is(err, state.ErrPromotion), errors.Is(err, jobspec.ErrInvalid):
		return http.StatusBadRequest
	}
	// Everything else, including cluster.ErrNoLeader ("No cluster leader",
	// as Nomad answers it), is a server-side fault.
	return http.StatusInternalServerError
}

// writeError writes err as a plain-text body, as Nomad does.
func writeError(w http.ResponseWriter, err error) {
	code := statusFor(err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, err.Error())
}
