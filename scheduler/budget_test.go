package scheduler

import (
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func TestBudget(t *testing.T) {
	cases := []struct {
		name string
		in   BudgetInput
		want int
	}{
		{"all old healthy", BudgetInput{MaxParallel: 2, Count: 4, Available: 4}, 2},
		{"one unknown", BudgetInput{MaxParallel: 2, Count: 4, Available: 3, Unknown: 1}, 1},
		{"all in flight", BudgetInput{MaxParallel: 2, Count: 4, Available: 2, Unknown: 2}, 0},
		{"one unhealthy", BudgetInput{MaxParallel: 3, Count: 6, Available: 5, Unhealthy: 1}, 0},
		{"blocked", BudgetInput{MaxParallel: 2, Count: 4, Available: 4, Blocked: true}, 0},
		{"no rolling", BudgetInput{MaxParallel: 0, Count: 4, Available: 4}, 0},
		// A new alloc died: it is neither unknown nor unhealthy-live, but the
		// serving allocs are already at count - max_parallel.
		{"dead new alloc holds the floor", BudgetInput{MaxParallel: 1, Count: 4, Available: 3}, 0},
		{"two dead of mp 3", BudgetInput{MaxParallel: 3, Count: 6, Available: 4}, 1},
		{"max_parallel above count", BudgetInput{MaxParallel: 5, Count: 2, Available: 2}, 2},
		{"empty group", BudgetInput{MaxParallel: 2}, 0},
	}
	for _, c := range cases {
		if got := Budget(c.in); got != c.want {
			t.Errorf("%s: Budget(%+v) = %d, want %d", c.name, c.in, got, c.want)
		}
	}
}

func TestRescheduleAttemptsLeft(t *testing.T) {
	p := testResched(t, "1/1h/5s/constant/0s")
	a := newTestAlloc()
	if !RescheduleAttemptsLeft(a, p, baseTime) {
		t.Fatal("a fresh alloc has an attempt left")
	}
	a.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{{RescheduleTime: baseTime.Add(-time.Minute).UnixNano()}}}
	if RescheduleAttemptsLeft(a, p, baseTime) {
		t.Fatal("the one attempt was used a minute ago")
	}
	if !RescheduleAttemptsLeft(a, p, baseTime.Add(2*time.Hour)) {
		t.Fatal("the attempt is outside the interval two hours later")
	}
	if RescheduleAttemptsLeft(a, nil, baseTime) || RescheduleAttemptsLeft(nil, p, baseTime) {
		t.Fatal("no policy, or no alloc, means no attempts")
	}
	if !RescheduleAttemptsLeft(a, testResched(t, "unlimited/0s/5s/exponential/1m"), baseTime) {
		t.Fatal("unlimited always has attempts")
	}
}

func newTestAlloc() *structs.Allocation {
	return &structs.Allocation{ID: "a", Name: "example.web[0]", TaskGroup: "web", ClientStatus: structs.AllocClientStatusFailed, DesiredStatus: structs.AllocDesiredStatusRun}
}
