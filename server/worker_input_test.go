package server

import (
	"slices"
	"testing"

	"github.com/droverhq/drover/structs"
)

func TestJobAllocsPicksTheJobInOrder(t *testing.T) {
	all := []*structs.Allocation{
		{ID: "a1", Namespace: "default", JobID: "web"},
		{ID: "a2", Namespace: "default", JobID: "api"},
		nil,
		{ID: "a3", Namespace: "prod", JobID: "web"},
		{ID: "a4", Namespace: "default", JobID: "web"},
		{ID: "a5", Namespace: "default", JobID: "web-2"},
	}
	ids := func(as []*structs.Allocation) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.ID)
		}
		return out
	}
	for _, tc := range []struct {
		ns, job string
		want    []string
	}{
		{"default", "web", []string{"a1", "a4"}},
		{"prod", "web", []string{"a3"}},
		{"default", "api", []string{"a2"}},
		{"default", "db", nil},
	} {
		if got := ids(jobAllocs(all, tc.ns, tc.job)); !slices.Equal(got, tc.want) {
			t.Errorf("%s/%s: %v, want %v", tc.ns, tc.job, got, tc.want)
		}
	}
}
