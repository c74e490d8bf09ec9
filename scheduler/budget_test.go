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
		if got, wake := Budget(c.in); got != c.want || !wake.IsZero() {
			t.Errorf("%s: Budget(%+v) = %d, %s; want %d and no wake", c.name, c.in, got, wake, c.want)
		}
	}
}

func TestBudgetStagger(t *testing.T) {
	now := baseTime
	const stagger = 10 * time.Second
	cases := []struct {
		name string
		in   BudgetInput
		want int
		wake time.Time
	}{
		{"first batch starts at once",
			BudgetInput{MaxParallel: 2, Count: 4, Available: 4, Stagger: stagger, Now: now}, 2, time.Time{}},
		{"batch not all healthy: wait, no wake (health brings the next pass)",
			BudgetInput{MaxParallel: 2, Count: 4, Available: 3, Unknown: 1, Stagger: stagger, Now: now, LastHealthy: now.Add(-time.Minute)}, 0, time.Time{}},
		{"batch healthy, stagger not over: wake at last healthy + stagger",
			BudgetInput{MaxParallel: 2, Count: 4, Available: 4, Stagger: stagger, Now: now, LastHealthy: now.Add(-3 * time.Second)}, 0, now.Add(7 * time.Second)},
		{"stagger over exactly",
			BudgetInput{MaxParallel: 2, Count: 4, Available: 4, Stagger: stagger, Now: now, LastHealthy: now.Add(-stagger)}, 2, time.Time{}},
		{"no stagger refills at once",
			BudgetInput{MaxParallel: 2, Count: 4, Available: 3, Unknown: 1, Now: now, LastHealthy: now}, 1, time.Time{}},
		{"blocked wins over the stagger",
			BudgetInput{MaxParallel: 2, Count: 4, Available: 4, Blocked: true, Stagger: stagger, Now: now, LastHealthy: now}, 0, time.Time{}},
		{"unhealthy wins over the stagger",
			BudgetInput{MaxParallel: 2, Count: 4, Available: 3, Unhealthy: 1, Stagger: stagger, Now: now, LastHealthy: now}, 0, time.Time{}},
	}
	for _, c := range cases {
		got, wake := Budget(c.in)
		if got != c.want || !wake.Equal(c.wake) {
			t.Errorf("%s: got %d wake %s, want %d wake %s", c.name, got, wake, c.want, c.wake)
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
