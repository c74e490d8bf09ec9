package structs

import (
	"testing"
	"time"
)

func TestEvaluationDueBy(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		e    *Evaluation
		want bool
	}{
		{"nil", nil, false},
		{"pending", &Evaluation{Status: EvalStatusPending}, true},
		{"pending, due now", &Evaluation{Status: EvalStatusPending, WaitUntil: now}, true},
		{"pending, later", &Evaluation{Status: EvalStatusPending, WaitUntil: now.Add(time.Second)}, false},
		{"pending with a wait", &Evaluation{Status: EvalStatusPending, Wait: time.Second}, false},
		{"blocked", &Evaluation{Status: EvalStatusBlocked}, false},
		{"complete", &Evaluation{Status: EvalStatusComplete}, false},
	}
	for _, c := range cases {
		if got := c.e.DueBy(now); got != c.want {
			t.Errorf("%s: DueBy = %v, want %v", c.name, got, c.want)
		}
	}
}
