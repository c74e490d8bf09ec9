package state

import (
	"strings"

	"github.com/droverhq/drover/structs"
)

// maxInterned bounds the intern table. When it is full it starts again
// empty: strings already stored stay valid (they are ordinary strings),
// later ones are shared anew. The bound keeps strings of unusual values
// (restart messages with a delay in them, driver errors) from piling up.
const maxInterned = 1 << 16

// interner hands out one shared copy of each string it has seen, so that
// the many allocations that carry the same namespace, job, group, node,
// eval, deployment, status, description or task event text hold one copy
// of it instead of one each (every decoded log entry brings fresh
// copies). It is used only inside write transactions, which go-memdb
// runs one at a time, so it needs no lock. Interning never changes a
// value, only which copy of equal bytes an object points to.
type interner struct {
	m map[string]string
}

func newInterner() *interner { return &interner{m: map[string]string{}} }

// str returns the shared copy of s.
func (in *interner) str(s string) string {
	if s == "" {
		return ""
	}
	if c, ok := in.m[s]; ok {
		return c
	}
	if len(in.m) >= maxInterned {
		clear(in.m)
	}
	// A clone, so that the table never keeps a larger buffer alive that s
	// might be a slice of.
	c := strings.Clone(s)
	in.m[c] = c
	return c
}

// allocStrings interns the repeated top-level strings of a, which the
// caller owns (a fresh copy about to be inserted). IDs and names that are
// unique per allocation are left alone: sharing them saves nothing.
func (in *interner) allocStrings(a *structs.Allocation) {
	for _, p := range []*string{
		&a.Namespace, &a.EvalID, &a.NodeID, &a.NodeName, &a.JobID, &a.TaskGroup,
		&a.DesiredStatus, &a.DesiredDescription, &a.ClientStatus, &a.ClientDescription,
		&a.DeploymentID,
	} {
		*p = in.str(*p)
	}
}

// taskState interns the strings of s and its events in place; s must be
// a copy the caller owns.
func (in *interner) taskState(s *structs.TaskState) {
	s.State = in.str(s.State)
	for _, e := range s.Events {
		if e == nil {
			continue
		}
		e.Type = in.str(e.Type)
		e.Message = in.str(e.Message)
		e.DisplayMessage = in.str(e.DisplayMessage)
		if x := e.TaskEventExtra; x != nil {
			x.RestartReason = in.str(x.RestartReason)
			x.DriverError = in.str(x.DriverError)
		}
	}
}
