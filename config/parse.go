package config

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/json"
)

// LoadFile reads and parses one configuration file; see Parse.
func LoadFile(path string) (*Config, []Warning, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read agent configuration: %w", err)
	}
	return Parse(path, src)
}

// Load parses every file in order and merges them onto base (Default() or
// DevConfig() as a rule), later files winning. Every file is read even
// when an earlier one is invalid, so that all problems are reported at
// once; the error is then an *Errors with all of them (or the first read
// error). A nil base is Default(). Load does not Validate the result.
func Load(base *Config, paths ...string) (*Config, []Warning, error) {
	if base == nil {
		base = Default()
	}
	out := base.clone()
	var warns []Warning
	var all []Diagnostic
	for _, p := range paths {
		c, w, err := LoadFile(p)
		warns = append(warns, w...)
		if err != nil {
			es, ok := err.(*Errors)
			if !ok {
				return nil, warns, err
			}
			all = append(all, es.Diagnostics...)
			continue
		}
		out = out.Merge(c)
	}
	if len(all) > 0 {
		return nil, warns, &Errors{Diagnostics: all}
	}
	return out, warns, nil
}

// Parse decodes one configuration file. The file is JSON when its name
// ends in ".json" or its first non-blank byte is "{", HCL otherwise. The
// returned Config has only the fields the file writes, marked as set (all
// other fields are zero): merge it onto Default() or DevConfig() to get a
// usable configuration.
//
// Warnings are Nomad settings drover ignores; they are returned apart so
// that the agent can log them. On any error the Config is nil and the
// error is an *Errors (errors.Is ErrInvalid) holding every problem found.
func Parse(filename string, src []byte) (*Config, []Warning, error) {
	d := &decoder{file: filename, cfg: &Config{}}
	var f *hcl.File
	var diags hcl.Diagnostics
	if strings.HasSuffix(filename, ".json") || bytes.HasPrefix(bytes.TrimSpace(src), []byte("{")) {
		f, diags = json.Parse(src, filename)
	} else {
		f, diags = hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	}
	d.hclDiags(diags, "")
	if f != nil && !diags.HasErrors() {
		d.body(f.Body, "")
	}
	warns, err := d.r.result()
	if err != nil {
		return nil, warns, err
	}
	return d.cfg, warns, nil
}

// decoder decodes one file into cfg, reporting into r.
type decoder struct {
	file string
	cfg  *Config
	r    report
}

// item is one attribute or block written in a body.
type item struct {
	name  string
	rng   hcl.Range // of the name
	attr  *hcl.Attribute
	block *hcl.Block
}

func (d *decoder) at(rng hcl.Range) Location {
	return Location{File: d.file, Line: rng.Start.Line, Column: rng.Start.Column}
}

// hclDiags reports HCL's own diagnostics (syntax, JSON shape, evaluation).
func (d *decoder) hclDiags(diags hcl.Diagnostics, field string) {
	for _, h := range diags {
		at := Location{File: d.file}
		if h.Subject != nil {
			at = d.at(*h.Subject)
		}
		msg := h.Summary
		if h.Detail != "" {
			msg += ": " + h.Detail
		}
		if field != "" {
			msg = field + ": " + msg
		}
		if h.Severity == hcl.DiagError {
			d.r.errorf(at, field, "%s", msg)
		} else {
			d.r.warnf(at, field, "%s", msg)
		}
	}
}

// items lists what body holds, in source order. A JSON body does not say
// which properties are blocks, so the grammar decides: a property whose
// path is a block is read as one block per object.
func (d *decoder) items(body hcl.Body, block string) []item {
	var out []item
	switch b := body.(type) {
	case *hclsyntax.Body:
		for name, a := range b.Attributes {
			out = append(out, item{name: name, rng: a.NameRange, attr: a.AsHCLAttribute()})
		}
		for _, blk := range b.Blocks {
			out = append(out, item{name: blk.Type, rng: blk.TypeRange, block: blk.AsHCLBlock()})
		}
	default:
		attrs, diags := body.JustAttributes()
		d.hclDiags(diags, block)
		for name, a := range attrs {
			if !blocks[join(block, name)] {
				out = append(out, item{name: name, rng: a.NameRange, attr: a})
				continue
			}
			schema := hcl.BlockHeaderSchema{Type: name}
			if labelled[join(block, name)] {
				schema.LabelNames = []string{"name"}
			}
			content, _, diags := body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{schema}})
			d.hclDiags(diags, join(block, name))
			for _, blk := range content.Blocks {
				out = append(out, item{name: name, rng: blk.TypeRange, block: blk})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].rng.Start.Byte < out[j].rng.Start.Byte })
	return out
}

// body decodes the items of one block (block is its path, "" at the top).
func (d *decoder) body(body hcl.Body, block string) {
	items := d.items(body, block)
	written := map[string]hcl.Range{}
	for _, it := range items {
		written[join(block, it.name)] = it.rng
	}
	seenBlock := map[string]bool{}
	for _, it := range items {
		path := join(block, it.name)
		if target, ok := aliases[path]; ok {
			if other, both := written[target]; both {
				d.r.errorf(d.at(it.rng), path, "%s and %s are the same setting (line %d); write only %s", path, target, other.Start.Line, target)
				continue
			}
			d.field(fieldByPath[target], it, path)
			continue
		}
		if f := fieldByPath[path]; f != nil {
			d.field(f, it, path)
			continue
		}
		if path == "client.host_volume" {
			d.hostVolume(it) // host_volume.go
			continue
		}
		if labelled[path] && it.block != nil {
			d.labelledBlock(it, path, seenBlock)
			continue
		}
		if blocks[path] {
			switch {
			case it.block == nil && labelled[path]:
				d.r.errorf(d.at(it.rng), path, "%s is a block, not an attribute: write %s \"NAME\" { ... }", path, it.name)
			case it.block == nil:
				d.r.errorf(d.at(it.rng), path, "%s is a block, not an attribute: write %s { ... }", path, it.name)
			case seenBlock[path]:
				d.r.errorf(d.at(it.rng), path, "duplicate %s block (only one is allowed)", path)
			case len(it.block.Labels) > 0:
				d.r.errorf(d.at(it.rng), path, "%s block takes no label, got %q", path, it.block.Labels[0])
			default:
				seenBlock[path] = true
				d.body(it.block.Body, path)
			}
			continue
		}
		if u, ok := unsupported[path]; ok {
			if u.refused && d.inert(it, path) {
				note, _, _ := strings.Cut(u.note, ";")
				d.r.warnf(d.at(it.rng), path, "%s is ignored: it leaves the integration off (%s)", path, note)
				continue
			}
			if u.refused {
				d.r.errorf(d.at(it.rng), path, "%s is not supported by drover (%s)", path, u.note)
			} else {
				d.r.warnf(d.at(it.rng), path, "%s is not supported by drover and is ignored (%s)", path, u.note)
			}
			continue
		}
		what, where := "attribute", block
		if it.block != nil {
			what = "block"
		}
		if where == "" {
			where = "at the top level"
		} else {
			where = "in " + where
		}
		d.r.errorf(d.at(it.rng), path, "unknown %s %q %s%s", what, it.name, where, suggest(it.name, known(block)))
	}
}

// labelledBlock decodes a block that takes one label naming it, such as
// plugin "raw_exec" { ... }, as the block at path.label.
func (d *decoder) labelledBlock(it item, path string, seen map[string]bool) {
	at := d.at(it.rng)
	if len(it.block.Labels) != 1 {
		d.r.errorf(at, path, "%s block takes one label, the name: write %s \"NAME\" { ... }", path, it.name)
		return
	}
	name := it.block.Labels[0]
	full := join(path, name)
	switch u, foreign := unsupported[full]; {
	case blocks[full] && seen[full]:
		d.r.errorf(at, full, "duplicate %s %q block (only one is allowed)", path, name)
	case blocks[full]:
		seen[full] = true
		d.body(it.block.Body, full)
	case foreign && u.refused:
		d.r.errorf(at, full, "%s %q is not supported by drover (%s)", path, name, u.note)
	case foreign:
		d.r.warnf(at, full, "%s %q is not supported by drover and is ignored (%s)", path, name, u.note)
	default:
		d.r.errorf(at, full, "unknown %s %q: drover's drivers are built in; the %s blocks drover reads are %s",
			path, name, path, quotedLabels(path))
	}
}

// quotedLabels lists the labels the grammar knows for a labelled block.
func quotedLabels(path string) string {
	var out []string
	for b := range blocks {
		if rest, ok := strings.CutPrefix(b, path+"."); ok && !strings.Contains(rest, ".") {
			out = append(out, quote(rest))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
