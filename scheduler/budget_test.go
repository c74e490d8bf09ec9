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
		if b := Budget(c.in); b.Start != c.want || !b.Wake.IsZero() || b.Surge != 0 {
			got, wake := b.Start, b.Wake
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
		b := Budget(c.in)
		got, wake := b.Start, b.Wake
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

// TestBudgetPolicies covers the part C inputs of Budget one by one.
func TestBudgetPolicies(t *testing.T) {
	cases := []struct {
		name        string
		in          BudgetInput
		start, surg int
	}{
		{"surge = width: whole batch beside the old allocs",
			BudgetInput{MaxParallel: 2, Count: 4, Available: 4, Surge: 2}, 2, 2},
		{"surge used up by allocs still beside their replacement",
			BudgetInput{MaxParallel: 2, Count: 4, Available: 5, Unknown: 1, Surge: 2, Extra: 1}, 1, 1},
		{"surge 1 of width 2: one beside, one destructive",
			BudgetInput{MaxParallel: 2, Count: 4, Available: 4, Surge: 1}, 2, 1},
		{"surge 1 of width 2, one old already down to the floor",
			BudgetInput{MaxParallel: 2, Count: 4, Available: 3, Unknown: 1, Surge: 1, Extra: 0}, 1, 1},
		{"failed old allocs are replaced destructively before any surge",
			BudgetInput{MaxParallel: 2, Count: 4, Available: 3, Down: 1, Surge: 2}, 2, 1},
		{"first batch of 1 starts alone",
			BudgetInput{MaxParallel: 3, Count: 6, Available: 6, FirstBatch: 1}, 1, 0},
		{"first batch in flight holds the rest",
			BudgetInput{MaxParallel: 3, Count: 6, Available: 5, Unknown: 1, FirstBatch: 1, NewAllocs: 1}, 0, 0},
		{"first batch healthy: full width",
			BudgetInput{MaxParallel: 3, Count: 6, Available: 6, FirstBatch: 1, NewAllocs: 1, NewHealthy: 1}, 3, 0},
		{"checkpoint cuts the batch to land on it",
			BudgetInput{MaxParallel: 4, Count: 10, Available: 10, Checkpoint: 5, NewAllocs: 3, NewHealthy: 3}, 2, 0},
		{"checkpoint reached: nothing until it is passed",
			BudgetInput{MaxParallel: 4, Count: 10, Available: 10, Checkpoint: 1, NewAllocs: 1, NewHealthy: 1}, 0, 0},
		{"max_failed: an unhealthy new alloc holds its place but stops nothing",
			BudgetInput{MaxParallel: 2, Count: 6, Available: 5, Unhealthy: 1, ToleratesFailures: true}, 1, 0},
		{"max_unhealthy exceeded: nothing starts",
			BudgetInput{MaxParallel: 2, Count: 6, Available: 4, LimitUnhealthy: true, MaxUnhealthy: 1, NotServing: 2}, 0, 0},
		{"max_unhealthy at the limit: batches go on",
			BudgetInput{MaxParallel: 2, Count: 6, Available: 5, LimitUnhealthy: true, MaxUnhealthy: 1, NotServing: 1}, 1, 0},
	}
	for _, c := range cases {
		if b := Budget(c.in); b.Start != c.start || b.Surge != c.surg {
			t.Errorf("%s: Budget(%+v) = start %d surge %d; want %d and %d", c.name, c.in, b.Start, b.Surge, c.start, c.surg)
		}
	}
}
