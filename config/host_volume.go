package config

import (
	"path/filepath"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// HostVolume is one of the client's host_volume blocks, as Nomad's: a
// directory of the client's host that jobs' volume blocks ask for by
// name.
type HostVolume struct {
	Path     string
	ReadOnly bool
	// At is where the block is written.
	At Location
}

// hostVolume decodes client { host_volume "NAME" { path, read_only } }.
// The blocks of every file add up; a name written twice is an error in
// one file, and a later file's block replaces an earlier one's (Merge).
func (d *decoder) hostVolume(it item) {
	const path = "client.host_volume"
	at := d.at(it.rng)
	if it.block == nil {
		d.r.errorf(at, path, "%s is a block, not an attribute: write host_volume \"NAME\" { ... }", path)
		return
	}
	if len(it.block.Labels) != 1 || it.block.Labels[0] == "" {
		d.r.errorf(at, path, "%s block takes one label, the volume's name: write host_volume \"NAME\" { ... }", path)
		return
	}
	name := it.block.Labels[0]
	if _, dup := d.cfg.Client.HostVolumes[name]; dup {
		d.r.errorf(at, path, "duplicate host_volume %q block", name)
		return
	}
	hv := HostVolume{At: at}
	attrs, diags := it.block.Body.JustAttributes()
	d.hclDiags(diags, path)
	for key, a := range attrs {
		field := path + "." + key
		vat := d.at(a.Expr.Range())
		v, ok := d.eval(a.Expr, field)
		if !ok {
			continue
		}
		switch key {
		case "path":
			s, err := convert.Convert(v, cty.String)
			if err != nil || s.IsNull() {
				d.r.errorf(vat, field, "%s must be a string (got %s)", field, describe(v))
				continue
			}
			hv.Path = s.AsString()
		case "read_only":
			b, err := convert.Convert(v, cty.Bool)
			if err != nil || b.IsNull() {
				d.r.errorf(vat, field, "%s must be a bool (got %s)", field, describe(v))
				continue
			}
			hv.ReadOnly = b.True()
		default:
			d.r.errorf(d.at(a.NameRange), field, "unknown attribute %q in host_volume%s", key, suggest(key, []string{"path", "read_only"}))
		}
	}
	switch {
	case hv.Path == "":
		d.r.errorf(at, path, "host_volume %q needs a path", name)
		return
	case !filepath.IsAbs(hv.Path):
		d.r.errorf(at, path, "host_volume %q: path must be absolute (got %q)", name, hv.Path)
		return
	}
	if d.cfg.Client.HostVolumes == nil {
		d.cfg.Client.HostVolumes = map[string]HostVolume{}
	}
	d.cfg.Client.HostVolumes[name] = hv
}
