package jobspec

import (
	"fmt"
	"strings"

	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Groups one at a time (website/rollouts.md#groups-one-at-a-time): the
// job-level update block's group_order and pause_between_groups. Their
// rows (spec_update.go) are JobOnly: they stay in Job.Update and are not
// laid into the groups' merged strategies.
//
//	update {
//	  group_order          = ["db", "api"]  # the others follow in file order
//	  pause_between_groups = "30s"
//	}
//
// API JSON: Job.Update.GroupOrder (a list of strings) and
// Job.Update.PauseBetweenGroups (integer nanoseconds).

// groupOrder decodes group_order: a list of group names, each element's
// place recorded as path[i].
func (d *decoder) groupOrder(a *hclsyntax.Attribute, path, field string) *[]string {
	v, ok := d.eval(a, path, field, cty.DynamicPseudoType)
	if !ok {
		return nil
	}
	if t := v.Type(); v.IsNull() || !(t.IsListType() || t.IsTupleType()) {
		got := t.FriendlyName()
		if !v.IsNull() && t == cty.String {
			got = fmt.Sprintf("%q", v.AsString())
		}
		d.r.errorf(d.at(a.Expr.Range(), field), "%s must be a list of group names (got %s)", field, got)
		d.lc.bad[path] = true
		return nil
	}
	return d.names(a, v, path, field, "group")
}

// names decodes the list v of attribute a, each element a name of a what
// ("zone", "group") written as a string, and records each element's place
// as path[i].
func (d *decoder) names(a *hclsyntax.Attribute, v cty.Value, path, field, what string) *[]string {
	var elems []hclsyntax.Expression
	if tuple, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
		elems = tuple.Exprs
	}
	out := []string{}
	bad := false
	for i, e := range v.AsValueSlice() {
		rng := a.Expr.Range()
		if len(elems) == v.LengthInt() {
			rng = elems[i].Range()
		}
		d.lc.set(fmt.Sprintf("%s[%d]", path, i), d.at(rng, field))
		s, err := convert.Convert(e, cty.String)
		if err != nil || s.IsNull() {
			d.r.errorf(d.at(rng, field), "%s must list %s names as strings (got %s)", field, what, e.Type().FriendlyName())
			bad = true
			continue
		}
		out = append(out, s.AsString())
	}
	if bad {
		d.lc.bad[path] = true
		return nil
	}
	return &out
}

// checkGroupOrder applies website/rollouts.md#groups-one-at-a-time's rules
// to the job-level block once the job's groups are known: each name of
// group_order a group of the job, none named twice; pause_between_groups
// not negative, and set only with group_order. (In a group's block both
// are refused by groupUpdate; on a batch job, Job.Update is the batch-job
// error and nil.)
func (b *builder) checkGroupOrder(j *structs.Job) {
	u := j.Update
	if u == nil {
		return
	}
	var groups []string
	for _, tg := range j.TaskGroups {
		if tg != nil && tg.Name != "" {
			groups = append(groups, tg.Name)
		}
	}
	at := func(i int) string { return fmt.Sprintf("Job.Update.GroupOrder[%d]", i) }
	first := map[string]int{}
	for i, name := range u.GroupOrder {
		if k, dup := first[name]; dup {
			b.err(at(i), "names group %q twice (first at %s)", name, b.position(at(k)))
			continue
		}
		first[name] = i
		if j.LookupTaskGroup(name) == nil {
			hint := suggest(name, groups)
			if hint == "" {
				hint = fmt.Sprintf(" (its groups: %s)", strings.Join(groups, ", "))
			}
			b.err(at(i), "names %q, which is not a group of job %q%s", name, j.ID, hint)
		}
	}
	switch {
	case u.PauseBetweenGroups < 0:
		b.err("Job.Update.PauseBetweenGroups", "must not be negative (got %s)", u.PauseBetweenGroups)
	case u.PauseBetweenGroups > 0 && len(u.GroupOrder) == 0:
		b.err("Job.Update.PauseBetweenGroups", "needs group_order (it is the pause after a group is done before the next one starts)")
	}
}
