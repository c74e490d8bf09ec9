package state

import "errors"

// Sentinel errors. Write methods wrap them with %w and the object's ID; the
// FSM returns them as the Apply response, so callers test with errors.Is.
var (
	// ErrNotFound: a write names an object the store does not hold.
	ErrNotFound = errors.New("not found")
	// ErrDeploymentTerminal: a deployment verb on a finished deployment.
	ErrDeploymentTerminal = errors.New("deployment is terminal")
	// ErrPromotion: promotion refused (no canaries, or not all healthy).
	ErrPromotion = errors.New("cannot promote deployment")
	// ErrConflict: a conditional write whose condition no longer holds
	// (e.g. a job registration with a stale JobModifyIndex).
	ErrConflict = errors.New("conflict")
	// ErrInvalid: a request is malformed (missing ID, object, ...).
	ErrInvalid = errors.New("invalid request")
)
