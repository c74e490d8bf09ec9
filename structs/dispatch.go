package structs

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A parameterized job's payload modes, as Nomad's parameterized block.
const (
	DispatchPayloadOptional  = "optional"
	DispatchPayloadRequired  = "required"
	DispatchPayloadForbidden = "forbidden"
)

// DispatchPayloadSizeLimit is the largest payload a dispatch carries, as
// Nomad's (16 KiB).
const DispatchPayloadSizeLimit = 16 * 1024

// DispatchLaunchSuffix joins a parameterized job's ID and a dispatch's
// Unix time and random suffix into the child's ID
// ("encode/dispatch-1764101441-3f2a9c1e"), as Nomad names them.
const DispatchLaunchSuffix = "/dispatch-"

// ParameterizedJobConfig makes a batch or sysbatch job a parameterized
// one: the job itself runs nothing; each dispatch registers a child job
// with the dispatch's meta and payload, as Nomad's parameterized block.
type ParameterizedJobConfig struct {
	// Payload is DispatchPayloadOptional (the default), Required or
	// Forbidden.
	Payload      string
	MetaRequired []string `json:",omitempty"`
	MetaOptional []string `json:",omitempty"`
}

// Copy returns a deep copy.
func (p *ParameterizedJobConfig) Copy() *ParameterizedJobConfig {
	if p == nil {
		return nil
	}
	c := *p
	c.MetaRequired = copySlice(p.MetaRequired)
	c.MetaOptional = copySlice(p.MetaOptional)
	return &c
}

// DispatchPayloadConfig is a task's dispatch_payload block: the file,
// relative to the task's local directory, the client writes a dispatched
// job's payload into.
type DispatchPayloadConfig struct {
	File string
}

// IsParameterized reports whether the job is a parameterized parent: it
// runs nothing itself; dispatches make its children. A dispatched child
// keeps the block but is not one.
func (j *Job) IsParameterized() bool { return j != nil && j.ParameterizedJob != nil && !j.Dispatched }

// IsParent reports whether the job runs nothing itself and launches child
// jobs: a periodic or a parameterized job.
func (j *Job) IsParent() bool { return j.IsPeriodic() || j.IsParameterized() }

// DispatchChildID is the ID of a child of parentID dispatched at t with
// the random suffix suffix (8 hex digits), as Nomad's; with a prefix
// (the request's IdPrefixTemplate) the prefix comes before the time.
func DispatchChildID(parentID, prefix string, t time.Time, suffix string) string {
	if prefix != "" {
		return parentID + DispatchLaunchSuffix + prefix + "-" + strconv.FormatInt(t.Unix(), 10) + "-" + suffix
	}
	return parentID + DispatchLaunchSuffix + strconv.FormatInt(t.Unix(), 10) + "-" + suffix
}

// ValidateDispatch checks a dispatch's meta and payload against the
// parameterized block p, as Nomad does; the error names the field at
// fault (Payload, Meta).
func ValidateDispatch(p *ParameterizedJobConfig, meta map[string]string, payload []byte) error {
	switch {
	case len(payload) > DispatchPayloadSizeLimit:
		return fmt.Errorf("Payload exceeds the maximum size: %d > %d bytes", len(payload), DispatchPayloadSizeLimit)
	case p.Payload == DispatchPayloadForbidden && len(payload) > 0:
		return fmt.Errorf("Payload is not allowed: the job's parameterized block says payload = %q", DispatchPayloadForbidden)
	case p.Payload == DispatchPayloadRequired && len(payload) == 0:
		return fmt.Errorf("Payload is required by the job's parameterized block (payload = %q) and was not given", DispatchPayloadRequired)
	}
	var missing, unknown []string
	for _, k := range p.MetaRequired {
		if _, ok := meta[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range meta {
		if !slices.Contains(p.MetaRequired, k) && !slices.Contains(p.MetaOptional, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	switch {
	case len(missing) > 0:
		return fmt.Errorf("Meta: the dispatch did not give the required meta keys %s", strings.Join(quoteAll(missing), ", "))
	case len(unknown) > 0:
		return fmt.Errorf("Meta: the dispatch gave meta keys the job does not allow (%s): only meta_required and meta_optional keys are allowed", strings.Join(quoteAll(unknown), ", "))
	}
	return nil
}

// ValidPayloadFile reports whether a dispatch_payload file stays inside
// the task's local directory.
func ValidPayloadFile(file string) bool {
	if file == "" || filepath.IsAbs(file) {
		return false
	}
	c := filepath.Clean(file)
	return c != "." && c != ".." && !strings.HasPrefix(c, "../")
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
