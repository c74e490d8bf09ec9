package main

import "strings"

// normalizeArgs lets Nomad's single-dash long flags ("-detach",
// "-var=k=v") work with cobra, which expects "--detach". A single-dash
// argument longer than one letter becomes a double-dash one; everything
// after a bare "--" is left alone, as are "-" (stdin), negative numbers and
// a one-letter flag with its value ("-n=5").
//
// alloc exec's command is not drover's: its flags are normalized only up
// to the allocation (the first argument that is neither a flag nor a
// flag's value), and "-it" is "-i -t", as docker users type it.
func normalizeArgs(args []string) []string {
	if len(args) >= 2 && args[0] == "alloc" && args[1] == "exec" {
		return normalizeExecArgs(args)
	}
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		// "-n=5" is a one-letter flag with its value, as pflag reads it.
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && a[2] != '=' && !isNumber(a[1:]) {
			a = "-" + a
		}
		out = append(out, a)
	}
	return out
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	return strings.Trim(s, "0123456789.") == ""
}

// execValueFlags are alloc exec's flags that take a value ("-task web").
var execValueFlags = map[string]bool{
	"task": true, "job": true, "group": true, "address": true, "region": true, "namespace": true, "token": true,
	"ca-cert": true, "ca-path": true, "client-cert": true, "client-key": true, "tls-server-name": true, "e": true,
}

func normalizeExecArgs(args []string) []string {
	out := append(make([]string, 0, len(args)+1), args[:2]...)
	for i := 2; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-" || !strings.HasPrefix(a, "-"):
			// The allocation, or the end of the flags: the rest is the
			// task and the command, as given.
			return append(out, args[i:]...)
		case a == "-it" || a == "-ti":
			out = append(out, "-i", "-t")
			continue
		}
		name := strings.TrimLeft(a, "-")
		if len(a) > 2 && a[1] != '-' {
			a = "-" + a
		}
		out = append(out, a)
		if execValueFlags[name] && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}
