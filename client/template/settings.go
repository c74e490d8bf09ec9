package template

import (
	"slices"
	"time"

	"github.com/droverhq/drover/structs"
)

// Settings are the client agent's template block (Nomad's client
// template settings that apply without Consul and Vault).
type Settings struct {
	// FunctionDenylist are functions no template may call (glob
	// patterns); the default denies Nomad's plugin and writeToFile, and
	// executeTemplate.
	FunctionDenylist []string
	// DisableSandbox lets the file function and source read, and
	// templates write, outside the task's directory; a path that leaves
	// the allocation's directory as written then reaches the host.
	DisableSandbox bool
	// MaxStale is how stale a read may be (served by any server).
	MaxStale time.Duration
	// BlockQueryWait is how long one blocking read waits for a change.
	BlockQueryWait time.Duration
	// Wait is the default wait of a template without one; WaitBounds
	// bound what a job may ask (nil: no bound).
	Wait       *structs.WaitConfig
	WaitBounds *structs.WaitConfig
	// NomadRetry is how reads of the servers are retried: Attempts 0
	// retries for ever.
	NomadRetry Retry
	// RenderTimeout is how long a task waits for its templates' first
	// render before it fails (drover's own: Nomad waits for ever).
	RenderTimeout time.Duration
	// EventRate is the least time between two "Missing" events.
	EventRate time.Duration
}

// Retry is a retry policy of reads.
type Retry struct {
	Attempts   int
	Backoff    time.Duration
	MaxBackoff time.Duration
}

// Defaults, as Nomad's client template block's.
const (
	DefaultMaxStale       = 87600 * time.Hour
	DefaultBlockQueryWait = 5 * time.Minute
	DefaultWaitMin        = 5 * time.Second
	DefaultWaitMax        = 4 * time.Minute
	DefaultRetryBackoff   = 250 * time.Millisecond
	DefaultRetryMaxWait   = time.Minute
	DefaultRenderTimeout  = 5 * time.Minute
	DefaultEventRate      = 3 * time.Second
)

// DefaultFunctionDenylist is the default function_denylist: Nomad's
// (plugin runs a command as the client, writeToFile writes where the
// client may) and executeTemplate, with which a template that calls
// itself exhausts the client's stack (the agent dies: no recover catches
// it). With it allowed, a template that recurses is refused before it
// renders (tmplcheck.Recursion).
var DefaultFunctionDenylist = []string{"plugin", "writeToFile", "executeTemplate"}

// DefaultSettings returns Nomad's client template defaults.
func DefaultSettings() Settings {
	minD, maxD := DefaultWaitMin, DefaultWaitMax
	return Settings{
		FunctionDenylist: slices.Clone(DefaultFunctionDenylist),
		MaxStale:         DefaultMaxStale,
		BlockQueryWait:   DefaultBlockQueryWait,
		Wait:             &structs.WaitConfig{Min: &minD, Max: &maxD},
		NomadRetry:       Retry{Backoff: DefaultRetryBackoff, MaxBackoff: DefaultRetryMaxWait},
		RenderTimeout:    DefaultRenderTimeout,
		EventRate:        DefaultEventRate,
	}
}

// withDefaults fills the zero fields of s with the defaults. A nil
// denylist is the default one; an empty, non-nil one denies nothing.
func (s Settings) withDefaults() Settings {
	d := DefaultSettings()
	if s.FunctionDenylist == nil {
		s.FunctionDenylist = d.FunctionDenylist
	}
	if s.MaxStale == 0 {
		s.MaxStale = d.MaxStale
	}
	if s.BlockQueryWait == 0 {
		s.BlockQueryWait = d.BlockQueryWait
	}
	if s.Wait == nil {
		s.Wait = d.Wait
	}
	if s.NomadRetry.Backoff == 0 {
		s.NomadRetry.Backoff = d.NomadRetry.Backoff
	}
	if s.NomadRetry.MaxBackoff == 0 {
		s.NomadRetry.MaxBackoff = d.NomadRetry.MaxBackoff
	}
	if s.RenderTimeout == 0 {
		s.RenderTimeout = d.RenderTimeout
	}
	if s.EventRate == 0 {
		s.EventRate = d.EventRate
	}
	return s
}

// wait returns a template's wait: its own, else the client's, bounded by
// the client's wait_bounds.
func (s Settings) wait(t *structs.Template) (minD, maxD time.Duration) {
	w := t.Wait
	if w == nil {
		w = s.Wait
	}
	if w != nil {
		if w.Min != nil {
			minD = *w.Min
		}
		if w.Max != nil {
			maxD = *w.Max
		}
	}
	if b := s.WaitBounds; b != nil && t.Wait != nil {
		if b.Min != nil {
			minD = max(minD, *b.Min)
			maxD = max(maxD, *b.Min)
		}
		if b.Max != nil {
			minD = min(minD, *b.Max)
			maxD = min(maxD, *b.Max)
		}
	}
	if maxD < minD {
		maxD = minD
	}
	return minD, maxD
}
