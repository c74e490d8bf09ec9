package jobspec

import (
	"fmt"
	"net/url"
	"time"

	"github.com/droverhq/drover/analysis"
	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// The update block's analysis blocks (website/jobspec/analysis.md): their
// fields as written (specAnalysis), the table of their fields
// (analysisSpec, built as updateSpec is), the merge by name (a group's
// block is laid over the job's of the same name, field by field) and the
// rules of website/rollouts.md part E.
//
//	update {
//	  analysis "errors" {
//	    query   = "sum(rate(http_errors_total{version=\"${job.version}\"}[1m]))"
//	    success = "result < 0.01"
//	  }
//	}

// specAnalysis is an analysis block as written; API JSON lists them as
// Analyses in an update block, each with its Name.
type specAnalysis struct {
	Name              *string
	Provider          *string
	Address           *string
	Query             *string
	Success           *string
	Failure           *string
	When              *string
	Interval          *time.Duration
	Count             *int
	InitialDelay      *time.Duration
	FailureLimit      *int
	InconclusiveLimit *int
	ErrorLimit        *int
}

// analysisField is one field of the analysis block.
type analysisField = specRow[specAnalysis, structs.Analysis]

// analysisSpec lists the analysis block's fields, in the grammar's order.
var analysisSpec = []analysisField{
	// The block's label in a job file.
	plainField("", "Name", (*decoder).str,
		func(a *specAnalysis) **string { return &a.Name },
		func(s *structs.Analysis) *string { return &s.Name }),
	plainField("provider", "Provider", (*decoder).str,
		func(a *specAnalysis) **string { return &a.Provider },
		func(s *structs.Analysis) *string { return &s.Provider }),
	plainField("address", "Address", (*decoder).str,
		func(a *specAnalysis) **string { return &a.Address },
		func(s *structs.Analysis) *string { return &s.Address }),
	plainField("query", "Query", (*decoder).analysisQuery,
		func(a *specAnalysis) **string { return &a.Query },
		func(s *structs.Analysis) *string { return &s.Query }),
	plainField("success", "Success", (*decoder).str,
		func(a *specAnalysis) **string { return &a.Success },
		func(s *structs.Analysis) *string { return &s.Success }),
	plainField("failure", "Failure", (*decoder).str,
		func(a *specAnalysis) **string { return &a.Failure },
		func(s *structs.Analysis) *string { return &s.Failure }),
	plainField("when", "When", (*decoder).str,
		func(a *specAnalysis) **string { return &a.When },
		func(s *structs.Analysis) *string { return &s.When }),
	plainField("interval", "Interval", (*decoder).dur,
		func(a *specAnalysis) **time.Duration { return &a.Interval },
		func(s *structs.Analysis) *time.Duration { return &s.Interval }),
	plainField("count", "Count", (*decoder).int,
		func(a *specAnalysis) **int { return &a.Count },
		func(s *structs.Analysis) *int { return &s.Count }),
	plainField("initial_delay", "InitialDelay", (*decoder).dur,
		func(a *specAnalysis) **time.Duration { return &a.InitialDelay },
		func(s *structs.Analysis) *time.Duration { return &s.InitialDelay }),
	plainField("failure_limit", "FailureLimit", (*decoder).int,
		func(a *specAnalysis) **int { return &a.FailureLimit },
		func(s *structs.Analysis) *int { return &s.FailureLimit }),
	plainField("inconclusive_limit", "InconclusiveLimit", (*decoder).int,
		func(a *specAnalysis) **int { return &a.InconclusiveLimit },
		func(s *structs.Analysis) *int { return &s.InconclusiveLimit }),
	plainField("error_limit", "ErrorLimit", (*decoder).int,
		func(a *specAnalysis) **int { return &a.ErrorLimit },
		func(s *structs.Analysis) *int { return &s.ErrorLimit }),
}

// analysisGrammar is the analysis block's part of the grammar table.
func analysisGrammar() []element { return rowsGrammar(analysisSpec) }

// analysisRoots are the roots of the runtime references a query may name
// (website/jobspec/analysis.md): kept as their "${…}" text, as ${NOMAD_…}
// and ${node.…} are elsewhere, for the leader to fill in.
var analysisRoots = map[string]bool{"job": true, "stable": true, "group": true, "deployment": true, "zone": true}

// analysisQuery decodes a query, keeping its runtime references.
func (d *decoder) analysisQuery(a *hclsyntax.Attribute, path, field string) *string {
	d.extraRoots = analysisRoots
	defer func() { d.extraRoots = nil }()
	return d.str(a, path, field)
}

// analyses decodes an update block's analysis blocks, each under
// path[i] (Analyses[0]) and named field.<label>.
func (d *decoder) analyses(bs []*hclsyntax.Block, path, field string, u *specUpdate) {
	if len(bs) == 0 {
		return
	}
	list := make([]*specAnalysis, 0, len(bs))
	for i, b := range bs {
		p := fmt.Sprintf("%s[%d]", path, i)
		name := b.Labels[0]
		f := fmt.Sprintf("%s.%s", field, name)
		d.lc.set(p, d.at(b.TypeRange, f))
		d.lc.set(p+".Name", d.at(b.LabelRanges[0], f))
		a := &specAnalysis{}
		decodeRows(d, b.Body, "analysis", p, f, analysisSpec, a)
		a.Name = &name
		list = append(list, a)
	}
	u.Analyses = &list
}

// layAnalyses lays the analyses u writes over the strategy's (the
// job-level block's, when a group writes its own): an analysis of a name
// the strategy has is merged field by field, a new one is appended after
// the defaults. An empty list (API JSON's []) clears the job's.
func layAnalyses(s *structs.UpdateStrategy, u *specUpdate) {
	if u.Analyses == nil {
		return
	}
	if len(*u.Analyses) == 0 {
		s.Analyses = nil
		return
	}
	out := structs.CopyAnalyses(s.Analyses)
	for _, w := range *u.Analyses {
		if w == nil {
			continue
		}
		var into *structs.Analysis
		if w.Name != nil {
			for _, a := range out {
				if a.Name == *w.Name {
					into = a
					break
				}
			}
		}
		if into == nil {
			into = defaultAnalysis()
			out = append(out, into)
		}
		for _, f := range analysisSpec {
			f.lay(into, w)
		}
	}
	s.Analyses = out
}

// defaultAnalysis is an analysis with the defaults of every field.
func defaultAnalysis() *structs.Analysis {
	return &structs.Analysis{
		Provider:   structs.AnalysisProviderPrometheus,
		When:       structs.AnalysisWhenEachBatch,
		Interval:   structs.DefaultAnalysisInterval,
		Count:      structs.DefaultAnalysisCount,
		ErrorLimit: structs.DefaultAnalysisErrorLimit,
	}
}

// analysisSources names where each field of a group's merged analyses
// came from, as "Analyses[i].Field" keys of src: the group's block when it
// writes the field, else the job's block of that name, else the group's.
func (b *builder) analysisSources(src map[string]string, path string, merged []*structs.Analysis, ju, gu *specUpdate) {
	index := func(u *specUpdate, name string) int {
		if u == nil || u.Analyses == nil {
			return -1
		}
		for i, a := range *u.Analyses {
			if a != nil && a.Name != nil && *a.Name == name {
				return i
			}
		}
		return -1
	}
	for i, a := range merged {
		ji, gi := index(ju, a.Name), index(gu, a.Name)
		for _, f := range analysisSpec {
			key := fmt.Sprintf("Analyses[%d].%s", i, f.JSON)
			gp := fmt.Sprintf("%s.Update.Analyses[%d].%s", path, gi, f.JSON)
			switch {
			case gi >= 0 && b.lc.has(gp):
				src[key] = gp
			case ji >= 0 && (b.lc.has(fmt.Sprintf("Job.Update.Analyses[%d].%s", ji, f.JSON)) || gi < 0):
				src[key] = fmt.Sprintf("Job.Update.Analyses[%d].%s", ji, f.JSON)
			case gi >= 0:
				src[key] = gp
			case ji >= 0:
				src[key] = fmt.Sprintf("Job.Update.Analyses[%d].%s", ji, f.JSON)
			}
		}
		if gi >= 0 {
			src[fmt.Sprintf("Analyses[%d]", i)] = fmt.Sprintf("%s.Update.Analyses[%d]", path, gi)
		} else if ji >= 0 {
			src[fmt.Sprintf("Analyses[%d]", i)] = fmt.Sprintf("Job.Update.Analyses[%d]", ji)
		}
	}
}

// checkWrittenAnalyses checks the analyses one block writes (updPath is
// the block's path): each has a name, and no name is written twice.
func (b *builder) checkWrittenAnalyses(updPath string, u *specUpdate) {
	if u == nil || u.Analyses == nil {
		return
	}
	first := map[string]int{}
	for i, a := range *u.Analyses {
		p := fmt.Sprintf("%s.Analyses[%d]", updPath, i)
		if a == nil {
			b.err(p, "must be an analysis, not null")
			continue
		}
		name := str(a.Name)
		if name == "" {
			b.err(p+".Name", "must be set: each analysis has a name")
			continue
		}
		if j, dup := first[name]; dup {
			b.err(p+".Name", "names analysis %q twice in one update block (first at %s)", name, b.position(fmt.Sprintf("%s.Analyses[%d].Name", updPath, j)))
			continue
		}
		first[name] = i
	}
}

// checkAnalyses applies website/rollouts.md E.3 to a merged strategy's
// analyses. at names where each field came from ("Analyses[0].Query").
func (b *builder) checkAnalyses(u *structs.UpdateStrategy, at func(string) string) {
	for i, a := range u.Analyses {
		f := func(name string) string { return at(fmt.Sprintf("Analyses[%d].%s", i, name)) }
		whole := at(fmt.Sprintf("Analyses[%d]", i))
		if a.Query == "" {
			b.err(whole, "analysis %q needs a query", a.Name)
		}
		if a.Success == "" && a.Failure == "" {
			b.err(whole, "analysis %q needs success or failure (an HCL expression over result and results)", a.Name)
		}
		for _, c := range []struct{ name, src string }{{"Success", a.Success}, {"Failure", a.Failure}} {
			if c.src == "" {
				continue
			}
			if _, err := analysis.ParseCondition(c.src); err != nil {
				b.err(f(c.name), "%v (got %q)", err, c.src)
			}
		}
		if a.Provider != structs.AnalysisProviderPrometheus {
			b.err(f("Provider"), "must be %s (got %q)", structs.AnalysisProviderPrometheus, a.Provider)
		}
		switch a.When {
		case structs.AnalysisWhenEachBatch, structs.AnalysisWhenBackground:
		case structs.AnalysisWhenCanary:
			if u.Canary <= 0 {
				b.err(f("When"), "is %q, which needs canary > 0 in the update block", a.When)
			}
		default:
			b.err(f("When"), "must be %s, %s or %s (got %q)", structs.AnalysisWhenCanary, structs.AnalysisWhenEachBatch,
				structs.AnalysisWhenBackground, a.When)
		}
		if a.Address != "" {
			if pu, err := url.Parse(a.Address); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
				b.err(f("Address"), "must be an http or https URL such as \"http://127.0.0.1:9090\" (got %q)", a.Address)
			}
		}
		if a.Interval < structs.MinAnalysisInterval {
			b.err(f("Interval"), "must be at least %s (got %s)", structs.MinAnalysisInterval, a.Interval)
		}
		if a.Count < 1 {
			b.err(f("Count"), "must be at least 1 (got %d)", a.Count)
		}
		if a.InitialDelay < 0 {
			b.err(f("InitialDelay"), "must not be negative (got %s)", a.InitialDelay)
		}
		for _, l := range []struct {
			name string
			v    int
		}{{"FailureLimit", a.FailureLimit}, {"InconclusiveLimit", a.InconclusiveLimit}, {"ErrorLimit", a.ErrorLimit}} {
			if l.v < 0 {
				b.err(f(l.name), "must not be negative (got %d)", l.v)
			}
		}
	}
}
