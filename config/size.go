package config

import (
	"fmt"
	"strconv"
	"strings"
)

// sizeUnits are the units ParseSize takes, as Nomad's (go-humanize):
// decimal KB, MB… and binary KiB, MiB….
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30, "ti": 1 << 40,
}

// ParseSize reads a size as Nomad's agent configuration writes one:
// "100GB", "512 MiB", "1024"; "0" means no limit.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mul, ok := sizeUnits[unit]
	n, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || n < 0 {
		return 0, fmt.Errorf("invalid size %q (write a number and a unit: \"100GB\", \"512MiB\")", s)
	}
	return int64(n * float64(mul)), nil
}
