package evalbroker

import (
	"fmt"
	"time"

	"github.com/droverhq/drover/structs"
)

// Defaults of Config, as Nomad's.
const (
	DefaultVisibilityTimeout   = 60 * time.Second
	DefaultDeliveryLimit       = 3
	DefaultInitialNackDelay    = 1 * time.Second
	DefaultSubsequentNackDelay = 20 * time.Second
)

// Config tunes a Broker. Start from DefaultConfig and override fields.
type Config struct {
	// VisibilityTimeout is how long a worker may hold a dequeued evaluation
	// without acking, nacking or resetting it before the broker nacks it.
	// Must be positive.
	VisibilityTimeout time.Duration

	// DeliveryLimit is how many times an evaluation is delivered before a
	// failed delivery reports it to OnFailed instead. At least 1.
	DeliveryLimit int

	// InitialNackDelay is the wait before the second delivery, and
	// SubsequentNackDelay the wait before each later one. Zero means at
	// once; negative is invalid.
	InitialNackDelay    time.Duration
	SubsequentNackDelay time.Duration

	// Clock measures nack delays and WaitUntil. Nil means SystemClock.
	Clock Clock

	// TimeoutClock measures the visibility timeout: how long a worker has
	// held an evaluation, which is the worker's own time, not the time
	// the schedule runs on. A leader under a test's clock, moved minutes
	// in a moment, must not take back an evaluation a worker is a
	// millisecond into. Nil means Clock.
	TimeoutClock Clock

	// OnCancel receives evaluations dropped because a newer one for the
	// same job is waiting; the leader marks them cancelled in state. It is
	// called without the broker's lock held, from the goroutine whose call
	// caused the drop (Enqueue, Restore, Ack, Nack, or a timer). It must
	// not block for long: hand slow work to another goroutine. Nil drops
	// them silently.
	OnCancel func(evals []*structs.Evaluation)

	// OnFailed receives an evaluation whose last allowed delivery failed;
	// the leader marks it failed in state and may create a follow-up
	// evaluation. The same calling rules as OnCancel apply.
	OnFailed func(eval *structs.Evaluation)

	// OnDequeue, when set, is told of every evaluation a Dequeue hands
	// out and how long it was ready before (by Clock; 0 when a waiting
	// Dequeue took it at once): the leader measures the broker's wait. It
	// is called without the broker's lock held, from the Dequeue's
	// goroutine, and must be quick.
	OnDequeue func(eval *structs.Evaluation, waited time.Duration)
}

// DefaultConfig returns a Config with Nomad's defaults and the system clock.
func DefaultConfig() Config {
	return Config{
		VisibilityTimeout:   DefaultVisibilityTimeout,
		DeliveryLimit:       DefaultDeliveryLimit,
		InitialNackDelay:    DefaultInitialNackDelay,
		SubsequentNackDelay: DefaultSubsequentNackDelay,
		Clock:               SystemClock{},
	}
}

// validate checks c and fills in the clock.
func (c *Config) validate() error {
	switch {
	case c.VisibilityTimeout <= 0:
		return fmt.Errorf("%w: visibility timeout %v must be positive", ErrInvalidConfig, c.VisibilityTimeout)
	case c.DeliveryLimit < 1:
		return fmt.Errorf("%w: delivery limit %d must be at least 1", ErrInvalidConfig, c.DeliveryLimit)
	case c.InitialNackDelay < 0 || c.SubsequentNackDelay < 0:
		return fmt.Errorf("%w: nack delays must not be negative", ErrInvalidConfig)
	}
	if c.Clock == nil {
		c.Clock = SystemClock{}
	}
	if c.TimeoutClock == nil {
		c.TimeoutClock = c.Clock
	}
	return nil
}
