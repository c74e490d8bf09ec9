package config

import "time"

// Merge returns a new configuration: c with every field that other sets
// (in a file, by a flag, or through Set) taken from other. Fields other
// leaves unset keep c's value, so a zero value in a later file overrides
// only when that file writes it. Lists are replaced whole; maps (meta,
// options) are merged key by key, other's value winning. Dev stays true if
// either is. Neither c nor other is modified; a nil other returns a copy
// of c, and a nil c merges onto an empty Config.
func (c *Config) Merge(other *Config) *Config {
	if c == nil {
		c = &Config{}
	}
	out := c.clone()
	if other == nil {
		return out
	}
	out.Dev = out.Dev || other.Dev
	for name, hv := range other.Client.HostVolumes {
		if out.Client.HostVolumes == nil {
			out.Client.HostVolumes = map[string]HostVolume{}
		}
		out.Client.HostVolumes[name] = hv
	}
	for _, path := range other.setPaths() {
		f := fieldByPath[path]
		if f == nil {
			continue
		}
		switch dst := f.ptr(out).(type) {
		case *string:
			*dst = *f.ptr(other).(*string)
		case *int:
			*dst = *f.ptr(other).(*int)
		case *bool:
			*dst = *f.ptr(other).(*bool)
		case *time.Duration:
			*dst = *f.ptr(other).(*time.Duration)
		case *[]string:
			*dst = append([]string(nil), *f.ptr(other).(*[]string)...)
		case *map[string]string:
			m := make(map[string]string, len(*dst))
			for k, v := range *dst {
				m[k] = v
			}
			for k, v := range *f.ptr(other).(*map[string]string) {
				m[k] = v
			}
			*dst = m
		}
		out.mark(path, other.at[path])
	}
	return out
}

// clone returns a deep copy of c.
func (c *Config) clone() *Config {
	out := *c
	out.Server.RetryJoin = append([]string(nil), c.Server.RetryJoin...)
	out.Client.Servers = append([]string(nil), c.Client.Servers...)
	out.Client.Meta = cloneMap(c.Client.Meta)
	out.Client.Options = cloneMap(c.Client.Options)
	if c.Client.HostVolumes != nil {
		out.Client.HostVolumes = make(map[string]HostVolume, len(c.Client.HostVolumes))
		for k, v := range c.Client.HostVolumes {
			out.Client.HostVolumes[k] = v
		}
	}
	out.set, out.at = nil, nil
	for p := range c.set {
		out.mark(p, c.at[p])
	}
	return &out
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
