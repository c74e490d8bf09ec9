package jobspec

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The update block's zones block (website/rollouts.md#zones): its fields as
// written (specZones), the table of its fields (zoneSpec, built as
// updateSpec is), the merge and its rules (website/rollouts.md C.8). The
// update block's "zones" row (spec_update.go) decodes and lays it.
//
//	update {
//	  zones {
//	    attribute           = "${node.meta.zone}"
//	    mode                = "zone_by_zone"  # or "concurrent"
//	    order               = "fewest_first"  # or ["b", "a"]
//	    disruption_budget   = 2               # or "25%"
//	    pause_between_zones = "1m"
//	    success_threshold   = "80%"
//	  }
//	}

// specZones is a zones block as written; API JSON names it Zones in an
// update block.
type specZones struct {
	Attribute *string
	Mode      *string
	// Order is the list of zone names; order = "fewest_first" is an empty
	// list, with which a group clears the job's list.
	Order             *[]string
	DisruptionBudget  *structs.Amount
	PauseBetweenZones *time.Duration
	SuccessThreshold  *structs.Amount
}

// zoneField is one field of the zones block.
type zoneField = specRow[specZones, structs.ZoneStrategy]

// zoneSpec lists the zones block's fields, in the grammar's order.
var zoneSpec = []zoneField{
	plainField("attribute", "Attribute", (*decoder).str,
		func(z *specZones) **string { return &z.Attribute },
		func(s *structs.ZoneStrategy) *string { return &s.Attribute }),
	plainField("mode", "Mode", (*decoder).str,
		func(z *specZones) **string { return &z.Mode },
		func(s *structs.ZoneStrategy) *string { return &s.Mode }),
	{
		HCL:  "order",
		JSON: "Order",
		decode: func(d *decoder, a *hclsyntax.Attribute, path, field string, z *specZones) {
			z.Order = d.zoneOrder(a, path, field)
		},
		lay: func(s *structs.ZoneStrategy, z *specZones) {
			if z.Order != nil {
				// Fewest first stays an empty list, not nil: in API JSON,
				// [] clears the job-level list where null inherits it.
				s.Order = slices.Clone(*z.Order)
			}
		},
	},
	amountField("disruption_budget", "DisruptionBudget",
		func(z *specZones) **structs.Amount { return &z.DisruptionBudget },
		func(s *structs.ZoneStrategy) **structs.Amount { return &s.DisruptionBudget }),
	plainField("pause_between_zones", "PauseBetweenZones", (*decoder).dur,
		func(z *specZones) **time.Duration { return &z.PauseBetweenZones },
		func(s *structs.ZoneStrategy) *time.Duration { return &s.PauseBetweenZones }),
	amountField("success_threshold", "SuccessThreshold",
		func(z *specZones) **structs.Amount { return &z.SuccessThreshold },
		func(s *structs.ZoneStrategy) **structs.Amount { return &s.SuccessThreshold }),
}

// zonesGrammar is the zones block's part of the grammar table.
func zonesGrammar() []element { return rowsGrammar(zoneSpec) }

// zones decodes an update block's zones block (nil: not written).
func (d *decoder) zones(b *hclsyntax.Block, path, field string, u *specUpdate) {
	if b == nil {
		return
	}
	d.lc.set(path, d.at(b.TypeRange, field))
	z := &specZones{}
	decodeRows(d, b.Body, "zones", path, field, zoneSpec, z)
	u.Zones = z
}

// zoneOrder decodes order: the word "fewest_first" (an empty list) or a
// list of zone names, each element's place recorded as path[i].
func (d *decoder) zoneOrder(a *hclsyntax.Attribute, path, field string) *[]string {
	v, ok := d.eval(a, path, field, cty.DynamicPseudoType)
	if !ok {
		return nil
	}
	t := v.Type()
	switch {
	case !v.IsNull() && t == cty.String && v.AsString() == structs.ZoneOrderFewestFirst:
		return &[]string{}
	case !v.IsNull() && t == cty.String:
		d.r.errorf(d.at(a.Expr.Range(), field), "%s must be %q or a list of zone names (got %q)", field, structs.ZoneOrderFewestFirst, v.AsString())
		d.lc.bad[path] = true
		return nil
	case v.IsNull() || !(t.IsListType() || t.IsTupleType()):
		d.r.errorf(d.at(a.Expr.Range(), field), "%s must be %q or a list of zone names (got %s)", field, structs.ZoneOrderFewestFirst, t.FriendlyName())
		d.lc.bad[path] = true
		return nil
	}
	return d.names(a, v, path, field, "zone")
}

// layZones lays the zones block u writes over the strategy's zones (the
// job-level block's, when a group writes its own), field by field.
func layZones(s *structs.UpdateStrategy, u *specUpdate) {
	if u.Zones == nil {
		return
	}
	z := s.Zones.Copy()
	if z == nil {
		z = &structs.ZoneStrategy{}
	}
	for _, f := range zoneSpec {
		f.lay(z, u.Zones)
	}
	s.Zones = z
}

// zoneSources names where each zones field of a group's merged strategy
// came from (src, as groupUpdate builds it for the update block's
// fields): the group's zones block when it writes the field, else the
// job's when the job has a zones block, else the group's. A field neither
// writes — a missing attribute — is thus blamed on the job-level block,
// once, rather than on every group that inherits it.
func (b *builder) zoneSources(src map[string]string, path string, ju, gu *specUpdate) {
	jobZones := ju != nil && ju.Zones != nil
	groupZones := gu != nil && gu.Zones != nil
	for _, f := range zoneSpec {
		key := "Zones." + f.JSON
		gp := path + ".Update." + key
		switch {
		case groupZones && b.lc.has(gp):
			src[key] = gp
		case jobZones:
			src[key] = "Job.Update." + key
		default:
			src[key] = gp
		}
	}
}

// checkZones applies website/rollouts.md C.8 to a merged zones block and
// then fills in its default mode. at names where each field came from
// ("Zones.Mode").
func (b *builder) checkZones(z *structs.ZoneStrategy, at func(string) string) {
	if z == nil {
		return
	}
	defer func() {
		if z.Mode == "" {
			z.Mode = structs.ZoneModeByZone
		}
	}()
	if msg := zoneAttributeProblem(z.Attribute); msg != "" {
		b.err(at("Zones.Attribute"), "%s", msg)
	}
	switch z.Mode {
	case "", structs.ZoneModeByZone, structs.ZoneModeConcurrent:
	default:
		b.err(at("Zones.Mode"), "must be %s or %s (got %q)", structs.ZoneModeByZone, structs.ZoneModeConcurrent, z.Mode)
	}
	first := map[string]int{}
	for i, name := range z.Order {
		p := fmt.Sprintf("%s[%d]", at("Zones.Order"), i)
		if j, dup := first[name]; dup {
			b.err(p, "names zone %q twice (first at %s)", name, b.position(fmt.Sprintf("%s[%d]", at("Zones.Order"), j)))
			continue
		}
		first[name] = i
		if name == "" {
			b.warn(p, "names the zone \"\", which holds the allocations on nodes without the attribute: it rolls last whatever the order says")
		}
	}
	for _, f := range []struct {
		name string
		a    *structs.Amount
	}{{"DisruptionBudget", z.DisruptionBudget}, {"SuccessThreshold", z.SuccessThreshold}} {
		if f.a == nil || !b.checkAmount(at("Zones."+f.name), *f.a) {
			continue
		}
		switch {
		case f.a.Percent && f.a.Value == 0:
			b.err(at("Zones."+f.name), "must be more than 0%% (got 0%%)")
		case !f.a.Percent && f.a.Value < 1:
			b.err(at("Zones."+f.name), "must be at least 1 (got %d)", f.a.Value)
		}
	}
	if z.PauseBetweenZones < 0 {
		b.err(at("Zones.PauseBetweenZones"), "must not be negative (got %s)", z.PauseBetweenZones)
	}
	if z.Mode == structs.ZoneModeConcurrent {
		mode := b.position(at("Zones.Mode"))
		if z.PauseBetweenZones != 0 {
			b.err(at("Zones.PauseBetweenZones"), "applies to mode %q only: with mode = %q (%s) every zone rolls at once",
				structs.ZoneModeByZone, structs.ZoneModeConcurrent, mode)
		}
		if z.SuccessThreshold != nil {
			b.err(at("Zones.SuccessThreshold"), "applies to mode %q only: with mode = %q (%s) every zone rolls at once",
				structs.ZoneModeByZone, structs.ZoneModeConcurrent, mode)
		}
	}
}

// zoneKnown reports whether key (the text of one ${...}) names a node
// value as structs.NodeValue reads it: node.datacenter, node.class,
// node.pool, node.unique.name, node.unique.id, attr.K, meta.K, node.meta.K.
func zoneKnown(key string) bool {
	switch key {
	case "node.datacenter", "node.class", "node.pool", "node.unique.name", "node.unique.id":
		return true
	}
	for _, prefix := range []string{"attr.", "meta.", "node.meta."} {
		if name, ok := strings.CutPrefix(key, prefix); ok {
			return name != "" && !strings.ContainsAny(name, " \t\r\n$")
		}
	}
	return false
}

// zoneAttributeProblem says what is wrong with a zones attribute, or "":
// it must name at least one node value in Nomad's interpolation syntax,
// and only values a node has. Text around them is kept ("${meta.zone}/
// ${meta.fault_domain}").
func zoneAttributeProblem(attr string) string {
	const known = "node.datacenter, node.class, node.pool, node.unique.name, node.unique.id, attr.<name>, meta.<name> or node.meta.<name>"
	if attr == "" {
		return "must be set to the node value that names each node's zone, such as ${node.meta.zone}"
	}
	named := 0
	for rest := attr; ; {
		i := strings.Index(rest, "${")
		if i < 0 {
			break
		}
		j := strings.Index(rest[i:], "}")
		if j < 0 {
			return fmt.Sprintf("has an unterminated ${ (got %q)", attr)
		}
		key := rest[i+2 : i+j]
		if !zoneKnown(key) {
			return fmt.Sprintf("names ${%s}, which is not a node value (use %s; got %q)", key, known, attr)
		}
		named++
		rest = rest[i+j+1:]
	}
	if named == 0 {
		return fmt.Sprintf("must name a node value such as ${node.meta.zone} (got %q)", attr)
	}
	return ""
}
