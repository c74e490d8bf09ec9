package jobspec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
	"github.com/droverhq/drover/tmplcheck"
)

// templates builds a task's template blocks with Nomad's defaults and
// checks them: where the files go, the change mode and what it needs,
// and the template text itself (its syntax and the functions it calls,
// tmplcheck).
func (b *builder) templates(path string, ats []*specTemplate) []*structs.Template {
	var out []*structs.Template
	dests := map[string]string{}
	for i, at := range ats {
		tpath := fmt.Sprintf("%s.Templates[%d]", path, i)
		if at == nil {
			b.err(tpath, "must not be null")
			continue
		}
		t := b.template(tpath, at)
		if prev, dup := dests[t.DestPath]; dup && t.DestPath != "" {
			b.err(tpath+".DestPath", "%q is the destination of another template (at %s)", t.DestPath, b.position(prev+".DestPath"))
		} else {
			dests[t.DestPath] = tpath
		}
		out = append(out, t)
	}
	return out
}

func (b *builder) template(path string, at *specTemplate) *structs.Template {
	t := &structs.Template{
		ChangeMode: structs.TemplateChangeModeRestart,
		Splay:      structs.DefaultTemplateSplay,
		Perms:      structs.DefaultTemplatePerms,
		LeftDelim:  structs.DefaultTemplateLeftDelim,
		RightDelim: structs.DefaultTemplateRightDelim,
		Uid:        at.Uid,
		Gid:        at.Gid,
	}
	lay(&t.SourcePath, at.SourcePath)
	lay(&t.DestPath, at.DestPath)
	lay(&t.EmbeddedTmpl, at.EmbeddedTmpl)
	// Nomad's API sends "" for an unset change mode, perms or
	// delimiters: the defaults.
	if at.ChangeMode != nil && *at.ChangeMode != "" {
		t.ChangeMode = *at.ChangeMode
	}
	lay(&t.ChangeSignal, at.ChangeSignal)
	lay(&t.Once, at.Once)
	lay(&t.Splay, at.Splay)
	if at.Perms != nil && *at.Perms != "" {
		t.Perms = *at.Perms
	}
	lay(&t.Envvars, at.Envvars)
	lay(&t.ErrMissingKey, at.ErrMissingKey)
	if at.LeftDelim != nil && *at.LeftDelim != "" {
		t.LeftDelim = *at.LeftDelim
	}
	if at.RightDelim != nil && *at.RightDelim != "" {
		t.RightDelim = *at.RightDelim
	}

	switch {
	case t.DestPath == "":
		b.err(path, "needs a destination (destination = \"local/file\")")
	default:
		if _, _, ok := structs.TemplatePath(t.DestPath); !ok {
			b.err(path+".DestPath", "%q escapes the task directory (write it under local/, secrets/ or alloc/)", t.DestPath)
		}
	}
	switch {
	case t.SourcePath != "" && t.EmbeddedTmpl != "":
		b.err(path+".EmbeddedTmpl", "cannot be set together with source: a template is read from one or the other")
	case t.SourcePath == "" && t.EmbeddedTmpl == "":
		b.err(path, "needs data (the template) or source (a template file in the task directory)")
	case t.SourcePath != "":
		if _, _, ok := structs.TemplatePath(t.SourcePath); !ok {
			b.err(path+".SourcePath", "%q escapes the task directory", t.SourcePath)
		}
	}

	if at.LeftDelim != nil && *at.LeftDelim != "" && (at.RightDelim == nil || *at.RightDelim == "") {
		b.err(path+".LeftDelim", "needs right_delimiter too")
	}
	if at.RightDelim != nil && *at.RightDelim != "" && (at.LeftDelim == nil || *at.LeftDelim == "") {
		b.err(path+".RightDelim", "needs left_delimiter too")
	}
	if t.EmbeddedTmpl != "" {
		if err := tmplcheck.Check(t.EmbeddedTmpl, t.LeftDelim, t.RightDelim); err != nil {
			switch {
			case errors.Is(err, tmplcheck.ErrRefusedFunction):
				b.err(path+".EmbeddedTmpl", "function %s: not supported by drover (no Consul or Vault integration; Nomad's own functions nomadVar and nomadService are)", strings.TrimPrefix(err.Error(), tmplcheck.ErrRefusedFunction.Error()+": "))
			default:
				b.err(path+".EmbeddedTmpl", "%v", err)
			}
		}
	}

	switch t.ChangeMode {
	case structs.TemplateChangeModeRestart, structs.TemplateChangeModeNoop:
	case structs.TemplateChangeModeSignal:
		if t.ChangeSignal == "" {
			t.ChangeSignal = structs.DefaultTemplateChangeSignal
		}
	case structs.TemplateChangeModeScript:
		if at.ChangeScript == nil {
			b.err(path+".ChangeMode", "\"script\" needs a change_script block")
		}
	default:
		b.err(path+".ChangeMode", "must be restart, signal, noop or script (got %q)", t.ChangeMode)
	}
	if t.ChangeSignal != "" {
		t.ChangeSignal = strings.ToUpper(t.ChangeSignal)
		if !strings.HasPrefix(t.ChangeSignal, "SIG") {
			t.ChangeSignal = "SIG" + t.ChangeSignal
		}
		switch {
		case t.ChangeMode != structs.TemplateChangeModeSignal:
			b.err(path+".ChangeSignal", "is set but change_mode is %q: a signal is sent only with change_mode = \"signal\"", t.ChangeMode)
		case !knownSignals[strings.TrimPrefix(t.ChangeSignal, "SIG")]:
			b.err(path+".ChangeSignal", "%q is not a signal", t.ChangeSignal)
		}
	}
	if cs := at.ChangeScript; cs != nil {
		spath := path + ".ChangeScript"
		s := &structs.ChangeScript{Timeout: structs.DefaultChangeScriptTimeout}
		lay(&s.Command, cs.Command)
		lay(&s.Timeout, cs.Timeout)
		lay(&s.FailOnError, cs.FailOnError)
		s.Args = append(s.Args, cs.Args...)
		if t.ChangeMode != structs.TemplateChangeModeScript {
			b.err(spath, "is set but change_mode is %q: the script runs only with change_mode = \"script\"", t.ChangeMode)
		}
		if s.Command == "" {
			b.err(spath+".Command", "is required")
		}
		if s.Timeout <= 0 {
			b.err(spath+".Timeout", "must be positive (got %s)", s.Timeout)
		}
		t.ChangeScript = s
	}
	if t.Splay < 0 {
		b.err(path+".Splay", "must not be negative (got %s)", t.Splay)
	}
	if v, err := strconv.ParseUint(t.Perms, 8, 12); err != nil || v > 0o7777 {
		b.err(path+".Perms", "must be an octal file mode such as \"0644\" (got %q)", t.Perms)
	}
	for _, id := range []struct {
		name string
		v    *int
	}{{"Uid", t.Uid}, {"Gid", t.Gid}} {
		if id.v != nil && *id.v < -1 {
			b.err(path+"."+id.name, "must not be negative (got %d)", *id.v)
		}
	}
	if w := at.Wait; w != nil {
		t.Wait = &structs.WaitConfig{Min: w.Min, Max: w.Max}
		b.checkWait(path+".Wait", t.Wait)
	}
	return t
}

// checkWait checks a wait block: neither bound negative, min not above
// max.
func (b *builder) checkWait(path string, w *structs.WaitConfig) {
	var zero time.Duration
	minD, maxD := zero, zero
	if w.Min != nil {
		minD = *w.Min
		if minD < 0 {
			b.err(path+".Min", "must not be negative (got %s)", minD)
		}
	}
	if w.Max != nil {
		maxD = *w.Max
		if maxD < 0 {
			b.err(path+".Max", "must not be negative (got %s)", maxD)
		}
	}
	if w.Min != nil && w.Max != nil && maxD < minD {
		b.err(path+".Max", "must not be less than min (%s < %s)", maxD, minD)
	}
}

// knownSignals are the signal names a template may send (without SIG).
var knownSignals = map[string]bool{
	"HUP": true, "INT": true, "QUIT": true, "ILL": true, "TRAP": true, "ABRT": true, "IOT": true, "BUS": true,
	"FPE": true, "KILL": true, "USR1": true, "SEGV": true, "USR2": true, "PIPE": true, "ALRM": true, "TERM": true,
	"STKFLT": true, "CHLD": true, "CONT": true, "STOP": true, "TSTP": true, "TTIN": true, "TTOU": true,
	"URG": true, "XCPU": true, "XFSZ": true, "VTALRM": true, "PROF": true, "WINCH": true, "IO": true,
	"PWR": true, "SYS": true,
}
