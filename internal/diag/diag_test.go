package diag

import (
	"testing"
)

func TestLocationString(t *testing.T) {
	for _, c := range []struct {
		l    Location
		want string
	}{
		{Location{File: "a.hcl", Line: 3, Column: 7}, "a.hcl:3:7"},
		{Location{File: "-data-dir"}, "-data-dir"},
		{Location{}, ""},
	} {
		if got := c.l.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.l, got, c.want)
		}
	}
}

type d struct {
	at  Location
	msg string
}

func (x d) String() string { return x.at.String() + ": " + x.msg }

func TestSortDedupLines(t *testing.T) {
	var u Dedup[d]
	var errs, warns []d
	u.Add(&errs, d{Location{"b", 1, 1}, "x"})
	u.Add(&errs, d{Location{"a", 2, 5}, "y"})
	u.Add(&errs, d{Location{"a", 2, 1}, "z"})
	u.Add(&errs, d{Location{"a", 2, 1}, "w"})
	u.Add(&warns, d{Location{"b", 1, 1}, "x"}) // already reported as an error
	Sort(errs, func(x d) Location { return x.at })
	if want := "a:2:1: z\na:2:1: w\na:2:5: y\nb:1:1: x"; Lines(errs) != want {
		t.Errorf("Lines = %q, want %q", Lines(errs), want)
	}
	if len(warns) != 0 {
		t.Errorf("duplicate kept: %v", warns)
	}
}

func TestClosest(t *testing.T) {
	known := []string{"count", "group", "task", "tasks"}
	if got := Closest("tsk", known, 1); got != "task" {
		t.Errorf("Closest(tsk) = %q, want task", got)
	}
	if got := Closest("grop", known, 0); got != "" {
		t.Errorf("Closest(grop, 0) = %q, want none", got)
	}
	if got := Closest("ab", []string{"bb", "aa"}, 1); got != "bb" {
		t.Errorf("tie: got %q, want the first, bb", got)
	}
}
