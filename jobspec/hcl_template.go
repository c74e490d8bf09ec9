package jobspec

import (
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// template decodes a task's template block.
func (d *decoder) template(b *hclsyntax.Block, path string) *specTemplate {
	d.lc.set(path, d.at(b.TypeRange, "template"))
	attrs, blocks := d.content(b.Body, "template")
	t := &specTemplate{
		SourcePath:    d.str(attrs["source"], path+".SourcePath", "template.source"),
		DestPath:      d.str(attrs["destination"], path+".DestPath", "template.destination"),
		EmbeddedTmpl:  d.str(attrs["data"], path+".EmbeddedTmpl", "template.data"),
		ChangeMode:    d.str(attrs["change_mode"], path+".ChangeMode", "template.change_mode"),
		ChangeSignal:  d.str(attrs["change_signal"], path+".ChangeSignal", "template.change_signal"),
		Once:          d.bool(attrs["once"], path+".Once", "template.once"),
		Splay:         d.dur(attrs["splay"], path+".Splay", "template.splay"),
		Perms:         d.str(attrs["perms"], path+".Perms", "template.perms"),
		Uid:           d.int(attrs["uid"], path+".Uid", "template.uid"),
		Gid:           d.int(attrs["gid"], path+".Gid", "template.gid"),
		LeftDelim:     d.str(attrs["left_delimiter"], path+".LeftDelim", "template.left_delimiter"),
		RightDelim:    d.str(attrs["right_delimiter"], path+".RightDelim", "template.right_delimiter"),
		Envvars:       d.bool(attrs["env"], path+".Envvars", "template.env"),
		ErrMissingKey: d.bool(attrs["error_on_missing_key"], path+".ErrMissingKey", "template.error_on_missing_key"),
	}
	if bs := blocks["change_script"]; len(bs) > 0 {
		spath := path + ".ChangeScript"
		d.lc.set(spath, d.at(bs[0].TypeRange, "change_script"))
		sattrs, _ := d.content(bs[0].Body, "change_script")
		t.ChangeScript = &specChangeScript{
			Command:     d.str(sattrs["command"], spath+".Command", "change_script.command"),
			Args:        d.strs(sattrs["args"], spath+".Args", "change_script.args"),
			Timeout:     d.dur(sattrs["timeout"], spath+".Timeout", "change_script.timeout"),
			FailOnError: d.bool(sattrs["fail_on_error"], spath+".FailOnError", "change_script.fail_on_error"),
		}
	}
	if bs := blocks["wait"]; len(bs) > 0 {
		wpath := path + ".Wait"
		d.lc.set(wpath, d.at(bs[0].TypeRange, "wait"))
		wattrs, _ := d.content(bs[0].Body, "wait")
		t.Wait = &specWait{
			Min: d.dur(wattrs["min"], wpath+".Min", "wait.min"),
			Max: d.dur(wattrs["max"], wpath+".Max", "wait.max"),
		}
	}
	return t
}
