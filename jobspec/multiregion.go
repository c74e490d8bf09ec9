package jobspec

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/droverhq/drover/structs"
)

// The multiregion block (website/multiregion.md#multi-region-jobs): the
// regions a job rolls across, in order, each with its count, datacenters,
// node pool and meta, and the strategy of the rollout between them.
// Nomad's API types: Multiregion, MultiregionStrategy, MultiregionRegion.

// specMultiregion is a job's multiregion block.
type specMultiregion struct {
	Strategy *specMultiregionStrategy
	Regions  []*specMultiregionRegion
}

// specMultiregionStrategy is a multiregion block's strategy block.
type specMultiregionStrategy struct {
	MaxParallel *int
	OnFailure   *string
}

// specMultiregionRegion is one region block of a multiregion block; its
// label is the region's name. Count is nil when not written (1, as
// Nomad's client fills it in).
type specMultiregionRegion struct {
	Name        string
	Count       *int
	Datacenters []string
	NodePool    string
	Meta        map[string]string
}

func init() {
	grammar["multiregion"] = []element{
		{"strategy", "Strategy", block, supported, ""},
		{"region", "Regions", block, supported, "in the order the regions roll"},
	}
	grammar["strategy"] = []element{
		{"max_parallel", "MaxParallel", attr, supported, "regions rolling at once; 0 is all of them"},
		{"on_failure", "OnFailure", attr, supported, `"fail_all", "fail_local" or unset`},
	}
	grammar["region"] = []element{
		{"", "Name", attr, supported, "the block's label"},
		{"count", "Count", attr, supported, "every group's count in this region; 1 when not written"},
		{"datacenters", "Datacenters", attr, supported, "replaces the job's in this region"},
		{"node_pool", "NodePool", attr, supported, "replaces the job's in this region"},
		{"meta", "Meta", block, supported, "merged over the job's in this region"},
	}
	labels["region"] = 1
	repeatable["region"] = true
	blockOf[reflect.TypeFor[specMultiregion]()] = "multiregion"
	blockOf[reflect.TypeFor[specMultiregionStrategy]()] = "strategy"
	blockOf[reflect.TypeFor[specMultiregionRegion]()] = "region"
}

// multiregion decodes a job's multiregion block as written.
func (d *decoder) multiregion(b *hclsyntax.Block, path string) *specMultiregion {
	d.lc.set(path, d.at(b.TypeRange, "multiregion"))
	_, blocks := d.content(b.Body, "multiregion")
	m := &specMultiregion{}
	if bs := blocks["strategy"]; len(bs) > 0 {
		spath := path + ".Strategy"
		d.lc.set(spath, d.at(bs[0].TypeRange, "strategy"))
		attrs, _ := d.content(bs[0].Body, "strategy")
		m.Strategy = &specMultiregionStrategy{
			MaxParallel: d.int(attrs["max_parallel"], spath+".MaxParallel", "strategy.max_parallel"),
			OnFailure:   d.str(attrs["on_failure"], spath+".OnFailure", "strategy.on_failure"),
		}
	}
	for i, rb := range blocks["region"] {
		rpath := fmt.Sprintf("%s.Regions[%d]", path, i)
		d.lc.set(rpath, d.at(rb.TypeRange, "region"))
		d.lc.set(rpath+".Name", d.at(rb.LabelRanges[0], "region"))
		attrs, rblocks := d.content(rb.Body, "region")
		r := &specMultiregionRegion{
			Name:        rb.Labels[0],
			Count:       d.int(attrs["count"], rpath+".Count", "region.count"),
			Datacenters: d.strs(attrs["datacenters"], rpath+".Datacenters", "region.datacenters"),
			Meta:        d.strMap(attrs, rblocks, "meta", rpath+".Meta", "region.meta"),
		}
		if s := d.str(attrs["node_pool"], rpath+".NodePool", "region.node_pool"); s != nil {
			r.NodePool = *s
		}
		m.Regions = append(m.Regions, r)
	}
	return m
}

// multiregion builds and checks a job's multiregion block. A block that
// names no region asks for nothing (Nomad's IsMultiregion is false for
// it) and is dropped.
func (b *builder) multiregion(j *structs.Job, am *specMultiregion) *structs.Multiregion {
	if am == nil {
		return nil
	}
	const path = "Job.Multiregion"
	m := &structs.Multiregion{Strategy: &structs.MultiregionStrategy{}}
	if s := am.Strategy; s != nil {
		lay(&m.Strategy.MaxParallel, s.MaxParallel)
		lay(&m.Strategy.OnFailure, s.OnFailure)
	}
	if m.Strategy.MaxParallel < 0 {
		b.err(path+".Strategy.MaxParallel", "must not be negative (got %d)", m.Strategy.MaxParallel)
	}
	switch m.Strategy.OnFailure {
	case "", structs.MultiregionOnFailureFailAll, structs.MultiregionOnFailureFailLocal:
	default:
		b.err(path+".Strategy.OnFailure", "must be %q, %q or unset (got %q)",
			structs.MultiregionOnFailureFailAll, structs.MultiregionOnFailureFailLocal, m.Strategy.OnFailure)
	}
	// As Nomad's: a batch job's regions run at once and fail alone, and a
	// system job's fail alone.
	switch j.Type {
	case structs.JobTypeBatch, structs.JobTypeSysBatch:
		if m.Strategy.MaxParallel != 0 || m.Strategy.OnFailure != "" {
			b.err(path+".Strategy", "is not allowed for %s jobs (their regions are not rolled out in turn)", j.Type)
		}
	case structs.JobTypeSystem:
		if m.Strategy.OnFailure != "" {
			b.err(path+".Strategy.OnFailure", "is not allowed for system jobs")
		}
	}
	seen := map[string]string{}
	for i, ar := range am.Regions {
		rpath := fmt.Sprintf("%s.Regions[%d]", path, i)
		if ar == nil {
			b.err(rpath, "must not be null")
			continue
		}
		r := &structs.MultiregionRegion{
			Name:        ar.Name,
			Count:       1,
			Datacenters: slices.Clone(ar.Datacenters),
			NodePool:    ar.NodePool,
			Meta:        ar.Meta,
		}
		lay(&r.Count, ar.Count)
		if len(r.Meta) == 0 {
			r.Meta = nil
		}
		if len(r.Datacenters) == 0 {
			r.Datacenters = nil
		}
		switch prev, dup := seen[r.Name]; {
		case r.Name == "":
			b.err(rpath+".Name", "must not be empty")
		case dup:
			b.err(rpath+".Name", "region %q is named twice (first at %s)", r.Name, b.position(prev+".Name"))
		default:
			seen[r.Name] = rpath
		}
		if r.Count < 0 {
			b.err(rpath+".Count", "must not be negative (got %d)", r.Count)
		}
		for k, dc := range r.Datacenters {
			if dc == "" {
				b.err(fmt.Sprintf("%s.Datacenters[%d]", rpath, k), "must not contain an empty name")
			}
		}
		m.Regions = append(m.Regions, r)
	}
	if len(m.Regions) == 0 {
		return nil
	}
	if j.Periodic != nil {
		b.err(path, "cannot be combined with periodic: a multi-region job is not periodic")
	}
	if j.ParameterizedJob != nil {
		b.err(path, "cannot be combined with parameterized: a multi-region job is not dispatched")
	}
	return m
}
