package structs

import (
	"path"
	"strings"
	"time"
)

// Template change modes: what the client does when a template's rendered
// file changes, as Nomad's.
const (
	TemplateChangeModeRestart = "restart"
	TemplateChangeModeSignal  = "signal"
	TemplateChangeModeNoop    = "noop"
	TemplateChangeModeScript  = "script"
)

// Template defaults, as Nomad's job canonicalization fills them in.
const (
	DefaultTemplateSplay         = 5 * time.Second
	DefaultTemplatePerms         = "0644"
	DefaultTemplateChangeSignal  = "SIGHUP"
	DefaultTemplateLeftDelim     = "{{"
	DefaultTemplateRightDelim    = "}}"
	DefaultChangeScriptTimeout   = 5 * time.Second
	TemplateEventType            = "Template" // the task events of templates
	TemplateRerenderedMessage    = "Template re-rendered"
	TemplateRestartMessage       = "Template with change_mode restart re-rendered"
	TemplateScriptFailedPrefix   = "Template failed to run script"
	TemplateMissingMessagePrefix = "Missing: "
)

// Template is a task's template block: a file rendered into the task's
// directory before the task starts, and again when the data it reads
// changes. The field names are Nomad's (api.Template).
type Template struct {
	// SourcePath is a template file in the task's directory (from an
	// artifact, say); EmbeddedTmpl is the template itself. One of them.
	SourcePath   string `json:",omitempty"`
	DestPath     string
	EmbeddedTmpl string `json:",omitempty"`
	ChangeMode   string
	// ChangeSignal is the signal of change mode "signal".
	ChangeSignal string        `json:",omitempty"`
	ChangeScript *ChangeScript `json:",omitempty"`
	// Once renders the template once; later changes are not watched.
	Once bool `json:",omitempty"`
	// Splay is the most a change's action is delayed, at random, so that
	// the allocations of a job do not all restart at once.
	Splay time.Duration
	// Perms is the rendered file's mode, in octal ("0644").
	Perms string
	// Uid and Gid own the rendered file when set (the client must be
	// able to chown).
	Uid        *int `json:",omitempty"`
	Gid        *int `json:",omitempty"`
	LeftDelim  string
	RightDelim string
	// Envvars: the rendered file is KEY=value lines that join the
	// task's environment.
	Envvars bool
	// VaultGrace is kept for Nomad's API shape; it has no effect.
	VaultGrace time.Duration `json:",omitempty"`
	// Wait is the least and most time a template waits for its data to
	// settle before it renders again; nil means the client's setting.
	Wait *WaitConfig `json:",omitempty"`
	// ErrMissingKey makes indexing a map with a missing key an error
	// rather than "<no value>".
	ErrMissingKey bool
}

// ChangeScript is what change mode "script" runs in the task.
type ChangeScript struct {
	Command string
	Args    []string `json:",omitempty"`
	Timeout time.Duration
	// FailOnError kills the task when the script fails.
	FailOnError bool
}

// WaitConfig is a template's wait block, or the client's.
type WaitConfig struct {
	Min *time.Duration `json:",omitempty"`
	Max *time.Duration `json:",omitempty"`
}

// Copy returns a deep copy of the template.
func (t *Template) Copy() *Template {
	if t == nil {
		return nil
	}
	c := *t
	if t.ChangeScript != nil {
		s := *t.ChangeScript
		s.Args = copySlice(t.ChangeScript.Args)
		c.ChangeScript = &s
	}
	c.Uid = copyPtr(t.Uid)
	c.Gid = copyPtr(t.Gid)
	c.Wait = t.Wait.Copy()
	return &c
}

// Copy returns a deep copy of the wait block.
func (w *WaitConfig) Copy() *WaitConfig {
	if w == nil {
		return nil
	}
	return &WaitConfig{Min: copyPtr(w.Min), Max: copyPtr(w.Max)}
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copyTemplates(in []*Template) []*Template {
	if in == nil {
		return nil
	}
	out := make([]*Template, len(in))
	for i, t := range in {
		out[i] = t.Copy()
	}
	return out
}

// Where a template's destination (or source) lands.
const (
	// TemplateInTask: under the task's directory.
	TemplateInTask = iota
	// TemplateInAlloc: under the allocation's shared directory (alloc/).
	TemplateInAlloc
)

// TemplatePath resolves a template's destination or source as written,
// after runtime variables were replaced: a path inside the task's
// directory (relative to it), or inside the allocation's shared
// directory when it starts with alloc/. The directory variables may stand
// for those directories ("${NOMAD_SECRETS_DIR}/x", "${NOMAD_ALLOC_DIR}/x").
// An absolute path is taken relative to the task's directory, as Nomad
// does. ok is false when the path escapes its directory.
func TemplatePath(p string) (rel string, where int, ok bool) {
	r := strings.NewReplacer(
		"${NOMAD_TASK_DIR}", "local", "${NOMAD_SECRETS_DIR}", "secrets", "${NOMAD_ALLOC_DIR}", "alloc",
		"${DROVER_TASK_DIR}", "local", "${DROVER_SECRETS_DIR}", "secrets", "${DROVER_ALLOC_DIR}", "alloc",
	)
	clean := path.Clean(strings.TrimLeft(r.Replace(p), "/"))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", 0, false
	}
	if clean == "alloc" || strings.HasPrefix(clean, "alloc/") {
		rest := strings.TrimPrefix(strings.TrimPrefix(clean, "alloc"), "/")
		if rest == "" {
			rest = "."
		}
		return rest, TemplateInAlloc, true
	}
	return clean, TemplateInTask, true
}
