package config

import (
	"errors"
	"net"

	"github.com/spf13/pflag"
)

// addrFlags are drover's flags that give a listen address as host:port;
// each sets an address and a port.
var addrFlags = map[string][2]string{
	"http-addr": {"addresses.http", "ports.http"},
	"raft-addr": {"addresses.raft", "ports.raft"},
}

// FlagFields maps each agent flag that overrides a file setting to the
// field it sets (see Fields). -http-addr and -raft-addr, which take
// host:port, set an address and a port each; -dev selects DevConfig.
func FlagFields() map[string]string {
	out := map[string]string{}
	for _, f := range fields {
		if f.flag != "" {
			out[f.flag] = f.path
		}
	}
	return out
}

// FromFlags returns a Config holding only the flags of fs that were given
// on the command line (pflag's Changed), each recorded as set at
// Location{File: "-name"}; merge it last so that flags win over files.
// Flags that match no field (see FlagFields) are skipped. A given -dev sets
// Dev. Every bad value is reported at once in an *Errors.
func FromFlags(fs *pflag.FlagSet) (*Config, error) {
	c := &Config{}
	byFlag := FlagFields()
	var all []Diagnostic
	fs.Visit(func(fl *pflag.Flag) {
		from := "-" + fl.Name
		var err error
		switch {
		case fl.Name == "dev":
			c.Dev = fl.Value.String() == "true"
		case byFlag[fl.Name] != "":
			err = c.Set(byFlag[fl.Name], from, flagValues(fl)...)
		case addrFlags[fl.Name] != [2]string{}:
			err = c.setAddr(addrFlags[fl.Name], from, fl.Value.String())
		}
		var es *Errors
		if errors.As(err, &es) {
			all = append(all, es.Diagnostics...)
		}
	})
	if len(all) > 0 {
		return nil, &Errors{Diagnostics: all}
	}
	return c, nil
}

// setAddr sets an address field and a port field from host:port; an empty
// host leaves the address alone.
func (c *Config) setAddr(paths [2]string, from, hostPort string) error {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		d := Diagnostic{Location: Location{File: from}, Field: paths[0], Message: from + " must be host:port (got " + quote(hostPort) + ")"}
		return &Errors{Diagnostics: []Diagnostic{d}}
	}
	if host != "" {
		if err := c.Set(paths[0], from, host); err != nil {
			return err
		}
	}
	return c.Set(paths[1], from, port)
}

// flagValues returns every value of a list flag, or the one value of any
// other.
func flagValues(fl *pflag.Flag) []string {
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	return []string{fl.Value.String()}
}
