package jobspec

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/droverhq/drover/structs"
)

// networks converts the group's network block and returns its port labels.
func (b *builder) networks(path string, tg *structs.TaskGroup, ans []*specNetwork) map[string]bool {
	ports := map[string]bool{}
	if len(ans) > 1 {
		b.err(fmt.Sprintf("%s.Networks[1]", path), "is defined twice (a group has at most one network block)")
	}
	for i, an := range ans {
		npath := fmt.Sprintf("%s.Networks[%d]", path, i)
		if an == nil {
			continue
		}
		n := &structs.NetworkResource{Mode: an.Mode}
		switch n.Mode {
		case "", "host":
			n.Mode = "host"
		case "bridge":
			// The allocation's namespace on the client's bridge, made
			// by the client or, with a docker task, docker's pause
			// container (the drivers are checked with the tasks,
			// build_driver.go).
		default:
			b.err(npath+".Mode", "%q is not supported by drover (\"host\" or \"bridge\")", an.Mode)
		}
		add := func(kind string, j int, p specPort) {
			ppath := fmt.Sprintf("%s.%s[%d]", npath, kind, j)
			if p.Label == "" {
				b.err(ppath+".Label", "needs a label")
			} else if ports[p.Label] {
				b.err(ppath+".Label", "%q is defined twice", p.Label)
			}
			ports[p.Label] = true
			if p.Value < 0 || p.Value > 65535 {
				b.err(ppath+".Value", "must be between 1 and 65535 (got %d)", p.Value)
			}
			if p.To < -1 || p.To > 65535 {
				b.err(ppath+".To", "must be between 0 and 65535 (got %d)", p.To)
			}
			if p.HostNetwork != "" && p.HostNetwork != structs.DefaultHostNetwork {
				// No node could place it, and the default network is not
				// what it asked for.
				b.err(ppath+".HostNetwork", "%q is not supported by drover (clients have only the %q host network)", p.HostNetwork, structs.DefaultHostNetwork)
			}
			sp := structs.Port{Label: p.Label, Value: p.Value, To: p.To, HostNetwork: p.HostNetwork}
			if kind == "ReservedPorts" && p.Value == 0 {
				b.err(ppath+".Value", "must be a static port (1..65535)")
			}
			if p.Value > 0 {
				n.ReservedPorts = append(n.ReservedPorts, sp)
			} else {
				n.DynamicPorts = append(n.DynamicPorts, sp)
			}
		}
		for j, p := range an.ReservedPorts {
			add("ReservedPorts", j, p)
		}
		for j, p := range an.DynamicPorts {
			add("DynamicPorts", j, p)
		}
		tg.Networks = append(tg.Networks, n)
	}
	return ports
}

// portKnown reports whether a service or check port is a label of the
// group's network or a number.
func portKnown(label string, ports map[string]bool) bool {
	if ports[label] {
		return true
	}
	n, err := strconv.Atoi(label)
	return err == nil && n > 0 && n <= 65535
}

func (b *builder) service(path string, as *specService, defName string, ports map[string]bool) *structs.Service {
	s := &structs.Service{Provider: structs.ServiceProviderConsul}
	if as == nil {
		b.err(path, "must not be null")
		return s
	}
	s.Name, s.TaskName, s.PortLabel, s.Address = as.Name, as.TaskName, as.PortLabel, as.Address
	s.Tags, s.Meta = slices.Clone(as.Tags), as.Meta
	s.CanaryTags = slices.Clone(as.CanaryTags)
	switch as.AddressMode {
	case "", structs.AddressModeAuto, structs.AddressModeHost, structs.AddressModeAlloc:
		// alloc: checked with the group's network (build_driver.go).
		s.AddressMode = as.AddressMode
	case "driver":
		b.err(path+".AddressMode", "%q is not supported by drover (\"auto\", \"host\", or \"alloc\" in bridge mode)", as.AddressMode)
	default:
		b.err(path+".AddressMode", "must be auto, host or alloc (got %q)", as.AddressMode)
	}
	s.OnUpdate = b.onUpdate(path+".OnUpdate", as.OnUpdate, "")
	if as.Provider != "" {
		s.Provider = as.Provider
	}
	if s.Name == "" {
		s.Name = defName
	}
	switch s.Provider {
	case structs.ServiceProviderConsul, structs.ServiceProviderNomad:
	default:
		b.err(path+".Provider", "must be nomad or consul (got %q)", s.Provider)
	}
	if s.PortLabel != "" && !portKnown(s.PortLabel, ports) {
		b.err(path+".PortLabel", "%q is not defined in the group network%s", s.PortLabel, suggest(s.PortLabel, keys(ports)))
	}
	b.checkRestartValid(path+".CheckRestart", as.CheckRestart)
	for i := range as.Checks {
		c := b.check(fmt.Sprintf("%s.Checks[%d]", path, i), s, &as.Checks[i], ports)
		c.CheckRestart = mergeCheckRestart(as.CheckRestart, as.Checks[i].CheckRestart)
		// A check without on_update takes its service's, as Nomad's.
		c.OnUpdate = b.onUpdate(fmt.Sprintf("%s.Checks[%d].OnUpdate", path, i), as.Checks[i].OnUpdate, s.OnUpdate)
		s.Checks = append(s.Checks, c)
	}
	return s
}

// onUpdate checks an on_update value; empty is def.
func (b *builder) onUpdate(path, v, def string) string {
	switch v {
	case "":
		return def
	case structs.OnUpdateRequireHealthy, structs.OnUpdateIgnoreWarnings, structs.OnUpdateIgnore:
		return v
	}
	b.err(path, "must be require_healthy, ignore_warnings or ignore (got %q)", v)
	return def
}

// checkRestartValid checks one check_restart block as written.
func (b *builder) checkRestartValid(path string, cr *specCheckRestart) {
	if cr == nil {
		return
	}
	if cr.Limit < 0 {
		b.err(path+".Limit", "must not be negative (got %d)", cr.Limit)
	}
	if cr.Grace != nil && *cr.Grace < 0 {
		b.err(path+".Grace", "must not be negative (got %s)", *cr.Grace)
	}
}

// mergeCheckRestart lays a check's check_restart over its service's, as
// Nomad merges them: the check's limit when positive, its grace when
// written, its ignore_warnings when true. Grace defaults to 1s.
func mergeCheckRestart(svc, check *specCheckRestart) *structs.CheckRestart {
	if svc == nil && check == nil {
		return nil
	}
	out := &structs.CheckRestart{Grace: structs.DefaultCheckRestartGrace}
	for _, cr := range []*specCheckRestart{svc, check} {
		if cr == nil {
			continue
		}
		if cr.Limit > 0 {
			out.Limit = cr.Limit
		}
		if cr.Grace != nil {
			out.Grace = *cr.Grace
		}
		out.IgnoreWarnings = out.IgnoreWarnings || cr.IgnoreWarnings
	}
	return out
}

func (b *builder) check(path string, s *structs.Service, ac *specCheck, ports map[string]bool) *structs.ServiceCheck {
	c := &structs.ServiceCheck{
		Name: ac.Name, Type: ac.Type, Path: ac.Path, Protocol: ac.Protocol, Method: ac.Method,
		PortLabel: ac.PortLabel, Interval: ac.Interval, Timeout: ac.Timeout, Header: ac.Header, TaskName: ac.TaskName,
		Command: ac.Command, Args: slices.Clone(ac.Args),
	}
	b.checkRestartValid(path+".CheckRestart", ac.CheckRestart)
	if c.Name == "" {
		c.Name = fmt.Sprintf("service: %q check", s.Name)
	}
	switch c.Type {
	case structs.CheckTypeHTTP:
		if c.Path == "" {
			b.err(path+".Path", "is required for http checks")
		}
		switch c.Protocol {
		case "", "http", "https":
		default:
			b.err(path+".Protocol", "must be http or https (got %q)", c.Protocol)
		}
	case structs.CheckTypeTCP:
	case structs.CheckTypeScript:
		if c.Command == "" {
			b.err(path+".Command", "is required for script checks")
		}
	case "grpc", "docker":
		b.err(path+".Type", "%q is not supported by drover (http, tcp or script)", c.Type)
	case "":
		b.err(path+".Type", "is required (http, tcp or script)")
	default:
		b.err(path+".Type", "must be http, tcp or script (got %q)", c.Type)
	}
	if c.Type != structs.CheckTypeScript {
		if c.Command != "" {
			b.err(path+".Command", "is for script checks only (this check's type is %q)", c.Type)
		}
		if len(c.Args) > 0 {
			b.err(path+".Args", "is for script checks only (this check's type is %q)", c.Type)
		}
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"Interval", c.Interval}, {"Timeout", c.Timeout}} {
		switch {
		case f.d == 0:
			b.err(path+"."+f.name, "is required")
		case f.d < 0:
			b.err(path+"."+f.name, "must be positive (got %s)", f.d)
		}
	}
	if c.PortLabel != "" && !portKnown(c.PortLabel, ports) {
		b.err(path+".PortLabel", "%q is not defined in the group network%s", c.PortLabel, suggest(c.PortLabel, keys(ports)))
	}
	if c.PortLabel == "" && s.PortLabel == "" && (c.Type == structs.CheckTypeHTTP || c.Type == structs.CheckTypeTCP) {
		b.err(path+".PortLabel", "is required for a %s check (on the check or its service)", c.Type)
	}
	return c
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
