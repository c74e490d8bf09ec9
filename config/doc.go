// Package config reads the drover agent's configuration files.
//
// A file is HCL (or JSON of the same shape) in the grammar of Nomad's agent
// configuration, restricted to what drover implements:
//
//	name       = "server-1"
//	data_dir   = "/var/lib/drover"
//	ports { http = 4646 }
//	server {
//	  enabled          = true
//	  bootstrap_expect = 3
//	  retry_join       = ["10.0.0.2:4646", "10.0.0.3:4646"]
//	}
//
// The agent builds its configuration in layers, later layers winning field
// by field: Default (or DevConfig with -dev), then each -config file in
// order, then the command-line flags. Only fields a layer sets override
// earlier ones, so a later file that leaves log_level out does not reset
// it, and a later file that writes log_json = false does.
//
//	cfg, warnings, err := config.Load(config.Default(), "a.hcl", "b.hcl")
//	flags, err := config.FromFlags(cmd.Flags()) // only the flags given
//	cfg = cfg.Merge(flags)
//	more, err := cfg.Check() // or cfg.Validate() without the warnings
//
// Parse and LoadFile check the grammar and the types of values: unknown
// names (with a suggestion), Nomad settings drover does not implement (an
// error, or a warning when ignoring them is harmless), wrong types and
// malformed durations. Check and Validate check the merged result: ranges,
// addresses, and the rules that span fields. Every problem is reported at
// once, each as FILE:LINE:COL: message naming the field; problems with a
// value given by a flag name the flag instead of a file.
package config

import "errors"

// ErrInvalid is what every *Errors matches with errors.Is: the
// configuration is invalid.
var ErrInvalid = errors.New("invalid agent configuration")

// ErrUnknownField is returned by Set for a field path drover does not know.
var ErrUnknownField = errors.New("unknown configuration field")
