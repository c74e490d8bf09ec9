package structs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The rollout policies drover takes from other fleet systems (kops, Azure,
// hawkBit, checkpoints): the fields of an update block beyond Nomad's, and
// how each resolves against a group's count. A job that writes none of
// them rolls out exactly as Nomad's update block says.

// Failure actions of an update block's on_failure.
const (
	OnFailureFail   = "fail"
	OnFailurePause  = "pause"
	OnFailureRevert = "revert"
)

// ErrAmount is wrapped by every error parsing an Amount.
var ErrAmount = errors.New(`must be a whole number or a percentage "N%" (0-100)`)

// Amount is a count, or a share of a group's count, as a job writes it: an
// integer N or a string "N%" with N in 0–100. In JSON it is a number or
// that string.
type Amount struct {
	Value   int
	Percent bool
}

// Count returns n allocs.
func Count(n int) *Amount { return &Amount{Value: n} }

// Percent returns p% of the count.
func Percent(p int) *Amount { return &Amount{Value: p, Percent: true} }

// ParseAmount reads "N%" or "N". It does not check the range of N.
func ParseAmount(s string) (Amount, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSuffix(t, "%")
	n, err := strconv.Atoi(strings.TrimSpace(t))
	if err != nil || t == "" || strings.ContainsAny(t, "+ ") {
		return Amount{}, fmt.Errorf("%q %w", s, ErrAmount)
	}
	return Amount{Value: n, Percent: pct}, nil
}

// String renders the amount as a job writes it.
func (a Amount) String() string {
	if a.Percent {
		return strconv.Itoa(a.Value) + "%"
	}
	return strconv.Itoa(a.Value)
}

// MarshalJSON writes a count as a number and a share as "N%".
func (a Amount) MarshalJSON() ([]byte, error) {
	if a.Percent {
		return json.Marshal(a.String())
	}
	return []byte(strconv.Itoa(a.Value)), nil
}

// UnmarshalJSON reads a number or a string "N" or "N%".
func (a *Amount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := ParseAmount(s)
		if err != nil {
			return err
		}
		*a = v
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("%s %w", b, ErrAmount)
	}
	v, err := strconv.Atoi(n.String())
	if err != nil {
		return fmt.Errorf("%s %w", b, ErrAmount)
	}
	*a = Amount{Value: v}
	return nil
}

// Of resolves the amount against count: a count as is; a share of count
// rounded up (up) or down.
func (a Amount) Of(count int, up bool) int {
	if !a.Percent {
		return a.Value
	}
	v := a.Value * count
	if up {
		return (v + 99) / 100
	}
	return v / 100
}

// ValidPercent reports whether a share lies in 0–100 (a count always does).
func (a Amount) ValidPercent() bool { return !a.Percent || a.Value >= 0 && a.Value <= 100 }

func copyAmount(a *Amount) *Amount {
	if a == nil {
		return nil
	}
	c := *a
	return &c
}

// ParallelFor is the batch width for a group of count allocs: max_parallel
// as written, or its percent of count rounded down and at least 1 (C.1).
func (u *UpdateStrategy) ParallelFor(count int) int {
	if u == nil {
		return 0
	}
	if u.MaxParallelPercent == nil {
		return u.MaxParallel
	}
	return max(1, *u.MaxParallelPercent*count/100)
}

// SurgeFor is max_surge for count allocs (a percent rounds up), never more
// than the batch width: a batch is at most max_parallel wide.
func (u *UpdateStrategy) SurgeFor(count int) int {
	if u == nil || u.MaxSurge == nil {
		return 0
	}
	return max(0, min(u.MaxSurge.Of(count, true), u.ParallelFor(count)))
}

// FirstBatchFor is the size of a group's first batch (a percent rounds up,
// at least 1), capped at the batch width so that the C.1 invariants hold;
// 0 when first_batch is not set.
func (u *UpdateStrategy) FirstBatchFor(count int) int {
	if u == nil || u.FirstBatch == nil {
		return 0
	}
	return max(1, min(u.FirstBatch.Of(count, true), u.ParallelFor(count)))
}

// MaxUnhealthyFor is max_unhealthy for count allocs (a percent rounds
// down); ok is false when it is not set.
func (u *UpdateStrategy) MaxUnhealthyFor(count int) (n int, ok bool) {
	if u == nil || u.MaxUnhealthy == nil {
		return 0, false
	}
	return u.MaxUnhealthy.Of(count, false), true
}

// MaxFailedFor is max_failed for count allocs (a percent rounds down); ok
// is false when it is not set.
func (u *UpdateStrategy) MaxFailedFor(count int) (n int, ok bool) {
	if u == nil || u.MaxFailed == nil {
		return 0, false
	}
	return u.MaxFailed.Of(count, false), true
}

// CheckpointsFor resolves the checkpoints for count allocs: numbers of
// healthy new allocs, a percent rounding up, at least 1.
func (u *UpdateStrategy) CheckpointsFor(count int) []int {
	if u == nil || len(u.Checkpoints) == 0 {
		return nil
	}
	out := make([]int, len(u.Checkpoints))
	for i, c := range u.Checkpoints {
		out[i] = max(1, c.Of(count, true))
	}
	return out
}

// FailureAction is what a failure of the deployment does: on_failure as
// written, else "revert" with auto_revert and "fail" without.
func (u *UpdateStrategy) FailureAction() string {
	switch {
	case u == nil:
		return OnFailureFail
	case u.OnFailure != "":
		return u.OnFailure
	case u.AutoRevert:
		return OnFailureRevert
	}
	return OnFailureFail
}

// NotServing reports whether a live allocation (desired to run, not yet
// replaced) serves nothing: failed, lost, or marked unhealthy (C.2's
// max_unhealthy counts these, of any version).
func (a *Allocation) NotServing() bool {
	if a == nil || a.DesiredStatus != AllocDesiredStatusRun || a.NextAllocation != "" {
		return false
	}
	switch a.ClientStatus {
	case AllocClientStatusFailed, AllocClientStatusLost:
		return true
	case AllocClientStatusComplete:
		return false
	}
	return a.IsUnhealthy()
}
