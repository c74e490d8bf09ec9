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
	CheckTypeHTTP = "http"
	CheckTypeTCP  = "tcp"
)

// Service is a service block of a group or task.
type Service struct {
	Name      string
	TaskName  string `json:",omitempty"`
	PortLabel string
	Provider  string
	Tags      []string `json:",omitempty"`
	Address   string   `json:",omitempty"`
	Checks    []*ServiceCheck
	Meta      map[string]string `json:",omitempty"`
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
}

// Copy returns a deep copy.
func (s *Service) Copy() *Service {
	if s == nil {
		return nil
	}
	c := *s
	c.Tags = copySlice(s.Tags)
	c.Meta = copyMap(s.Meta)
	if s.Checks != nil {
		c.Checks = make([]*ServiceCheck, len(s.Checks))
		for i, ch := range s.Checks {
			cc := *ch
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
