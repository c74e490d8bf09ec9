// Package jobspec reads job files — Nomad's HCL job syntax, or Nomad's JSON
// — and API job objects into drover's structs.Job: variables, locals and
// functions evaluated, runtime references such as ${NOMAD_PORT_http} kept
// for the client, defaults and the update merge applied, and every problem
// reported at once with its file, line and column.
package jobspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Options are the values given to a job file from outside.
type Options struct {
	Vars     []string // "-var k=v" values, in order (later wins)
	VarFiles []string // "-var-file" paths (HCL syntax, .hcl or .json var files)
	// AllowFS lets the job file call the filesystem functions (file,
	// fileset, abspath, …), as the CLI does; the agent's /v1/jobs/parse
	// does not. Relative paths are read from BaseDir, by default the
	// directory of the job file.
	AllowFS bool
	BaseDir string
	// ParseOnly reads the job as written, for /v1/jobs/parse: Nomad's
	// parse does not validate, so a job without groups is returned (with
	// none) rather than refused. Registration and validation check it.
	ParseOnly bool
}

// Parse reads a job file (HCL, or Nomad JSON when the content starts with
// '{') named filename. It returns the job with defaults and the update
// merge applied, warnings (each located, formatted like errors), and an
// error. The error is *Errors when the input is invalid: every problem at
// once.
func Parse(filename string, src []byte, opts Options) (*structs.Job, []Diagnostic, error) {
	if trimmed := bytes.TrimLeft(src, " \t\r\n\ufeff"); len(trimmed) > 0 && trimmed[0] == '{' {
		return parseJSONFile(filename, src)
	}
	r := &report{}
	lc := newLocator(filename, false)
	d := &decoder{file: filename, src: src, r: r, lc: lc, funcs: jobFunctions(filename, opts)}
	if job := d.topLevel(opts); job != nil {
		if j := finishJob(job, lc, r, opts.ParseOnly); len(r.errs) == 0 {
			warns, _ := r.result()
			return j, warns, nil
		}
	}
	warns, err := r.result()
	return nil, warns, err
}

// ParseAsWritten parses an HCL job file as Parse does with ParseOnly, and
// returns the job as the file writes it, in Nomad's API JSON shape with
// nothing filled in (an element not written is null): what Nomad's
// /v1/jobs/parse answers without Canonicalize. The job's name is its
// label unless written. A JSON job file is returned as Parse returns it.
func ParseAsWritten(filename string, src []byte, opts Options) (json.RawMessage, []Diagnostic, error) {
	if trimmed := bytes.TrimLeft(src, " \t\r\n\ufeff"); len(trimmed) > 0 && trimmed[0] == '{' {
		j, warns, err := parseJSONFile(filename, src)
		if err != nil {
			return nil, warns, err
		}
		b, err := json.Marshal(j)
		return b, warns, err
	}
	r := &report{}
	lc := newLocator(filename, false)
	d := &decoder{file: filename, src: src, r: r, lc: lc, funcs: jobFunctions(filename, opts)}
	if job := d.topLevel(opts); job != nil {
		written, err := json.Marshal(job)
		if err != nil {
			return nil, nil, err
		}
		if finishJob(job, lc, r, true); len(r.errs) == 0 {
			warns, _ := r.result()
			return written, warns, nil
		}
	}
	warns, err := r.result()
	return nil, warns, err
}

// topLevel decodes the top level of a job file: variables, locals, one job.
func (d *decoder) topLevel(opts Options) *specJob {
	f, diags := hclsyntax.ParseConfig(d.src, d.file, hcl.InitialPos)
	d.hclDiags(diags)
	if diags.HasErrors() {
		return nil
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		d.r.errorf(loc{File: d.file}, "not an HCL body")
		return nil
	}
	_, blocks := d.content(body, "file")
	vars := d.declareVariables(blocks["variable"])
	d.assignVariables(vars, opts)
	d.validateVariables(vars)
	vals := map[string]cty.Value{}
	for name, v := range vars {
		if v.value != nil {
			vals[name] = *v.value
		} else {
			vals[name] = cty.DynamicVal
		}
	}
	varObj := cty.ObjectVal(vals)
	locals := d.locals(blocks["locals"], varObj)
	d.ctx = &hcl.EvalContext{
		Functions: d.funcs,
		Variables: map[string]cty.Value{"var": varObj, "local": cty.ObjectVal(locals)},
	}
	jobs := blocks["job"]
	switch {
	case len(jobs) == 0:
		d.r.errorf(loc{File: d.file, Line: 1, Column: 1, Field: "job"}, "no job block: a job file needs job \"name\" { ... }")
		return nil
	case len(jobs) > 1:
		for _, b := range jobs[1:] {
			d.r.errorf(d.at(b.TypeRange, "job"), "more than one job block (a file holds one job)")
		}
	}
	return d.job(jobs[0])
}

// finish applies defaults, the update merge and the shared checks.
func finish(aj *specJob, lc *locator, r *report) *structs.Job {
	return finishJob(aj, lc, r, false)
}

// finishJob is finish; parseOnly leaves out the checks Nomad's parse does
// not make (Options.ParseOnly).
func finishJob(aj *specJob, lc *locator, r *report, parseOnly bool) *structs.Job {
	b := &builder{lc: lc, r: r, parseOnly: parseOnly}
	return b.job(aj)
}

// ParseFile reads the job file at path and parses it with Parse. Reading
// errors are returned as they are (not *Errors).
func ParseFile(path string, opts Options) (*structs.Job, []Diagnostic, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading job file: %w", err)
	}
	return Parse(path, src, opts)
}
