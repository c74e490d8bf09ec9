package evalbroker

import "errors"

// Sentinel errors returned by the Broker and Blocked. Callers test them with
// errors.Is; the returned errors may wrap them with context.
var (
	// ErrDisabled is returned while the broker or tracker is disabled, that
	// is when this server is not the leader. Waiting Dequeue calls return it
	// when the broker is disabled under them.
	ErrDisabled = errors.New("evalbroker: disabled")

	// ErrInvalidEval is returned for a nil evaluation, or one without an ID
	// or scheduler type, or one that is already terminal.
	ErrInvalidEval = errors.New("evalbroker: invalid evaluation")

	// ErrNoSchedulerTypes is returned by Dequeue when it is given no
	// scheduler types to serve.
	ErrNoSchedulerTypes = errors.New("evalbroker: no scheduler types")

	// ErrNotOutstanding is returned by Ack, Nack and OutstandingReset for an
	// evaluation that is not out with a worker (never dequeued, already
	// acked or nacked, or nacked by the visibility timeout).
	ErrNotOutstanding = errors.New("evalbroker: evaluation not outstanding")

	// ErrTokenMismatch is returned by Ack, Nack and OutstandingReset when
	// the token is not the one of the evaluation's current delivery.
	ErrTokenMismatch = errors.New("evalbroker: token does not match")

	// ErrInvalidConfig is returned by New for an unusable Config.
	ErrInvalidConfig = errors.New("evalbroker: invalid config")
)
