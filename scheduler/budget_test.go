package scheduler

import "testing"

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
