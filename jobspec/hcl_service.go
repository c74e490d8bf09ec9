package jobspec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

func (d *decoder) network(b *hclsyntax.Block, path string) *specNetwork {
	d.lc.set(path, d.at(b.TypeRange, "network"))
	attrs, blocks := d.content(b.Body, "network")
	n := &specNetwork{}
	if s := d.str(attrs["mode"], path+".Mode", "network.mode"); s != nil {
		n.Mode = *s
	}
	for i, pb := range blocks["port"] {
		ppath := fmt.Sprintf("%s.DynamicPorts[%d]", path, i)
		label := pb.Labels[0]
		d.lc.set(ppath, d.at(pb.TypeRange, "port"))
		d.lc.set(ppath+".Label", d.at(pb.LabelRanges[0], "port"))
		field := fmt.Sprintf("port.%s", label)
		pattrs, _ := d.content(pb.Body, "port")
		p := specPort{Label: label}
		if v := d.int(pattrs["static"], ppath+".Value", field+".static"); v != nil {
			p.Value = *v
		}
		if v := d.int(pattrs["to"], ppath+".To", field+".to"); v != nil {
			p.To = *v
		}
		if v := d.str(pattrs["host_network"], ppath+".HostNetwork", field+".host_network"); v != nil {
			p.HostNetwork = *v
		}
		n.DynamicPorts = append(n.DynamicPorts, p)
	}
	return n
}

func (d *decoder) service(b *hclsyntax.Block, path string) *specService {
	d.lc.set(path, d.at(b.TypeRange, "service"))
	attrs, blocks := d.content(b.Body, "service")
	s := &specService{}
	set := func(dst *string, name, jsonName string) {
		if v := d.str(attrs[name], path+"."+jsonName, "service."+name); v != nil {
			*dst = *v
		}
	}
	set(&s.Name, "name", "Name")
	set(&s.PortLabel, "port", "PortLabel")
	set(&s.Address, "address", "Address")
	set(&s.TaskName, "task", "TaskName")
	set(&s.Provider, "provider", "Provider")
	set(&s.AddressMode, "address_mode", "AddressMode")
	set(&s.OnUpdate, "on_update", "OnUpdate")
	s.Tags = d.strs(attrs["tags"], path+".Tags", "service.tags")
	s.CanaryTags = d.strs(attrs["canary_tags"], path+".CanaryTags", "service.canary_tags")
	s.Meta = d.strMap(attrs, blocks, "meta", path+".Meta", "service.meta")
	for i, cb := range blocks["check"] {
		s.Checks = append(s.Checks, d.check(cb, fmt.Sprintf("%s.Checks[%d]", path, i)))
	}
	if bs := blocks["check_restart"]; len(bs) > 0 {
		s.CheckRestart = d.checkRestart(bs[0], path+".CheckRestart")
	}
	return s
}

// checkRestart decodes a check_restart block of a service or a check.
func (d *decoder) checkRestart(b *hclsyntax.Block, path string) *specCheckRestart {
	d.lc.set(path, d.at(b.TypeRange, "check_restart"))
	attrs, _ := d.content(b.Body, "check_restart")
	c := &specCheckRestart{Grace: d.dur(attrs["grace"], path+".Grace", "check_restart.grace")}
	if v := d.int(attrs["limit"], path+".Limit", "check_restart.limit"); v != nil {
		c.Limit = *v
	}
	if v := d.bool(attrs["ignore_warnings"], path+".IgnoreWarnings", "check_restart.ignore_warnings"); v != nil {
		c.IgnoreWarnings = *v
	}
	return c
}

func (d *decoder) check(b *hclsyntax.Block, path string) specCheck {
	d.lc.set(path, d.at(b.TypeRange, "check"))
	attrs, blocks := d.content(b.Body, "check")
	c := specCheck{}
	set := func(dst *string, name, jsonName string) {
		if v := d.str(attrs[name], path+"."+jsonName, "check."+name); v != nil {
			*dst = *v
		}
	}
	set(&c.Name, "name", "Name")
	set(&c.Type, "type", "Type")
	set(&c.Path, "path", "Path")
	set(&c.Protocol, "protocol", "Protocol")
	set(&c.Method, "method", "Method")
	set(&c.PortLabel, "port", "PortLabel")
	set(&c.TaskName, "task", "TaskName")
	set(&c.Command, "command", "Command")
	set(&c.OnUpdate, "on_update", "OnUpdate")
	c.Args = d.strs(attrs["args"], path+".Args", "check.args")
	if bs := blocks["check_restart"]; len(bs) > 0 {
		c.CheckRestart = d.checkRestart(bs[0], path+".CheckRestart")
	}
	if v := d.dur(attrs["interval"], path+".Interval", "check.interval"); v != nil {
		c.Interval = *v
	}
	if v := d.dur(attrs["timeout"], path+".Timeout", "check.timeout"); v != nil {
		c.Timeout = *v
	}
	if !d.lc.has(path + ".Interval") {
		d.lc.set(path+".Interval", d.at(b.TypeRange, "check.interval"))
	}
	if !d.lc.has(path + ".Timeout") {
		d.lc.set(path+".Timeout", d.at(b.TypeRange, "check.timeout"))
	}
	c.Header = d.header(attrs, blocks, path+".Header")
	return c
}

// header decodes header { Name = ["v1", "v2"] } (or the attribute form).
func (d *decoder) header(attrs map[string]*hclsyntax.Attribute, blocks map[string][]*hclsyntax.Block, path string) map[string][]string {
	var list map[string]*hclsyntax.Attribute
	if a := attrs["header"]; a != nil {
		d.record(a, path, "check.header")
		v, ok := d.value(a, "check.header", cty.Map(cty.List(cty.String)))
		if !ok {
			return nil
		}
		out := map[string][]string{}
		for k, e := range v.AsValueMap() {
			for _, s := range e.AsValueSlice() {
				if !s.IsNull() {
					out[k] = append(out[k], s.AsString())
				}
			}
		}
		return out
	}
	bs := blocks["header"]
	if len(bs) == 0 {
		return nil
	}
	d.lc.set(path, d.at(bs[0].TypeRange, "check.header"))
	list = bs[0].Body.Attributes
	out := map[string][]string{}
	for k, a := range list {
		out[k] = d.strs(a, path+"."+k, "check.header."+k)
	}
	return out
}
