package structs

import (
	"context"
	"fmt"
)

// A registration or a deregistration may ask for its evaluation's
// priority (Nomad's EvalPriority, the request's or ?eval_priority=),
// instead of the job's. The HTTP layer puts it in the request's context;
// the leader reads it when it stamps the evaluation.

type evalPriorityKey struct{}

// WithEvalPriority returns ctx carrying an evaluation priority; 0 is
// none (the job's priority).
func WithEvalPriority(ctx context.Context, p int) context.Context {
	if p == 0 {
		return ctx
	}
	return context.WithValue(ctx, evalPriorityKey{}, p)
}

// EvalPriorityOr returns the evaluation priority ctx carries, or def.
func EvalPriorityOr(ctx context.Context, def int) int {
	if p, ok := ctx.Value(evalPriorityKey{}).(int); ok && p > 0 {
		return p
	}
	return def
}

// CheckEvalPriority checks a requested evaluation priority: 0 (none) or
// a job priority, as Nomad's.
func CheckEvalPriority(p int) error {
	if p != 0 && (p < MinJobPriority || p > MaxJobPriority) {
		return fmt.Errorf("eval priority must be between %d and %d inclusively (got %d)", MinJobPriority, MaxJobPriority, p)
	}
	return nil
}
