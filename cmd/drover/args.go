package main

import "strings"

// normalizeArgs lets Nomad's single-dash long flags ("-detach",
// "-var=k=v") work with cobra, which expects "--detach". A single-dash
// argument longer than one letter becomes a double-dash one; everything
// after a bare "--" is left alone, as are "-" (stdin) and negative numbers.
func normalizeArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && !isNumber(a[1:]) {
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
