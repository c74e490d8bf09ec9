package structs

import "time"

// Service providers. Drover runs checks itself for the "nomad" provider; a
// "consul" service's checks are run by drover too (there is no Consul).
const (
	ServiceProviderNomad  = "nomad"
	ServiceProviderConsul = "consul"
)

// Check types drover runs.
const (
	CheckTypeHTTP   = "http"
	CheckTypeTCP    = "tcp"
	CheckTypeScript = "script"
)

// Check statuses, as Nomad's (and Consul's).
const (
	CheckPassing  = "passing"
	CheckWarning  = "warning"
	CheckCritical = "critical"
)

// Service is a service block of a group or task.
type Service struct {
	Name      string
	TaskName  string `json:",omitempty"`
	PortLabel string
	Provider  string
	Tags      []string `json:",omitempty"`
	// CanaryTags replace Tags in the registration of an allocation that
	// is a canary of a deployment not yet promoted.
	CanaryTags []string `json:",omitempty"`
	Address    string   `json:",omitempty"`
	// AddressMode is "auto" or "host" (empty: auto); both advertise the
	// host address.
	AddressMode string `json:",omitempty"`
	// OnUpdate is the default of its checks' OnUpdate.
	OnUpdate string `json:",omitempty"`
	Checks   []*ServiceCheck
	Meta     map[string]string `json:",omitempty"`
}

// ServiceCheck is a health check the client runs against the alloc's port.
type ServiceCheck struct {
	Name      string
	Type      string
	Path      string `json:",omitempty"`
	Protocol  string `json:",omitempty"`
	Method    string `json:",omitempty"`
	PortLabel string `json:",omitempty"`
	Interval  time.Duration
	Timeout   time.Duration
	Header    map[string][]string `json:",omitempty"`
	TaskName  string              `json:",omitempty"`
	// Command and Args are a script check's command, run inside its task.
	Command string   `json:",omitempty"`
	Args    []string `json:",omitempty"`
	// CheckRestart restarts the check's task when the check keeps
	// failing; its service's check_restart is merged in.
	CheckRestart *CheckRestart `json:",omitempty"`
	// OnUpdate says what the check counts for in a deployment's health:
	// OnUpdateRequireHealthy (empty means the same), OnUpdateIgnoreWarnings
	// or OnUpdateIgnore.
	OnUpdate string `json:",omitempty"`
}

// CheckRestart is a check_restart block: once Grace has passed since its
// task started, a check that has failed Limit times in a row restarts the
// task through its restart policy. Limit 0 never restarts.
type CheckRestart struct {
	Limit          int
	Grace          time.Duration
	IgnoreWarnings bool
}

// DefaultCheckRestartGrace is check_restart's grace when unset, as Nomad's.
const DefaultCheckRestartGrace = time.Second

// TriggersRestarts reports whether the check can restart its task.
func (c *ServiceCheck) TriggersRestarts() bool {
	return c != nil && c.CheckRestart != nil && c.CheckRestart.Limit > 0
}

// Copy returns a deep copy.
func (s *Service) Copy() *Service {
	if s == nil {
		return nil
	}
	c := *s
	c.Tags = copySlice(s.Tags)
	c.CanaryTags = copySlice(s.CanaryTags)
	c.Meta = copyMap(s.Meta)
	if s.Checks != nil {
		c.Checks = make([]*ServiceCheck, len(s.Checks))
		for i, ch := range s.Checks {
			cc := *ch
			cc.Args = copySlice(ch.Args)
			if ch.CheckRestart != nil {
				r := *ch.CheckRestart
				cc.CheckRestart = &r
			}
			if ch.Header != nil {
				cc.Header = make(map[string][]string, len(ch.Header))
				for k, v := range ch.Header {
					cc.Header[k] = copySlice(v)
				}
			}
			c.Checks[i] = &cc
		}
	}
	return &c
}

func copyServices(in []*Service) []*Service {
	if in == nil {
		return nil
	}
	out := make([]*Service, len(in))
	for i, s := range in {
		out[i] = s.Copy()
	}
	return out
}
