package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/droverhq/drover/internal/nomadcompat"
)

// Every flag that Nomad's command of the same name accepts is a flag of
// drover's command (internal/nomadcompat/flags_gen.go is the table, read
// from Nomad's sources by scripts/nomad-flags.sh). A command defines the
// flags it honours; completeNomadFlags adds the others when the tree is
// built, so that none is ever an "unknown flag":
//
//   - the global flags, on a command that does not talk to an agent (fmt,
//     job init, tls ca create…), are accepted and have no effect, as in
//     Nomad;
//   - any other is accepted and refused when given, with the reason:
//     refusedReasons, or else that drover's command does not implement it.

// refusedAnnotation marks a flag drover accepts only to refuse it; its
// value is the reason.
const refusedAnnotation = "drover-refused"

// noEffectAnnotation marks a global flag accepted without effect by a
// command that does not talk to an agent, as Nomad's.
const noEffectAnnotation = "drover-no-effect"

// refusedReasons says why drover refuses a flag of Nomad's, by "PATH -FLAG"
// or, for every command, by "-FLAG".
var refusedReasons = map[string]string{
	"-policy-override":                         "Sentinel policies are a Nomad Enterprise feature",
	"-consul-namespace":                        "drover has no Consul integration",
	"-consul-token":                            "drover has no Consul integration",
	"-vault-namespace":                         "drover has no Vault integration",
	"-vault-token":                             "drover has no Vault integration",
	"-eval-priority":                           "drover evaluates every job at the job's priority",
	"-hcl1":                                    "drover reads HCL2 job files only, as Nomad since 1.5",
	"-ui":                                      "the web UI has no page for what this command shows (drover ui opens the pages it has)",
	"job history -diff-tag":                    "drover has no version tags yet",
	"job init -template":                       "drover's job init writes its one example job; it has no template library yet",
	"job init -list-templates":                 "drover's job init writes its one example job; it has no template library yet",
	"job init -connect":                        "drover has no Consul Connect",
	"login -oidc-callback-addr":                "the OIDC browser flow is not supported by drover; log in with a JWT auth method",
	"acl token create -accessor":               "the servers make every token's accessor ID",
	"acl policy apply -job":                    "the servers have no policies attached to a job's workload identity yet",
	"acl policy apply -group":                  "the servers have no policies attached to a job's workload identity yet",
	"acl policy apply -task":                   "the servers have no policies attached to a job's workload identity yet",
	"-filter":                                  "drover's servers do not filter lists with expressions yet",
	"-per-page":                                "drover's servers do not page lists yet",
	"-page-token":                              "drover's servers do not page lists yet",
	"alloc exec -e":                            "drover's alloc exec has no escape sequences",
	"operator snapshot save -redact":           "a drover snapshot is the whole state; it cannot be redacted yet",
	"operator root keyring rotate -prepublish": "drover rotates a key at once; it does not prepublish one yet",
	"job scale -check-index":                   "the servers do not enforce a job modify index on a scaling yet",
	"deployment status -wait":                  "drover's deployment status -monitor follows the deployment without a bounded wait",
	"tls cert create -domain":                  "drover's agents check the names server.REGION.nomad and client.REGION.nomad: a certificate of another domain would fail that check",
	"job dispatch -wait":                       "drover's job dispatch monitors the child without a bounded wait",
	"-authenticate":                            "the UI asks for a token on its own page",
	"job stop -no-shutdown-delay":              "drover's job stop always waits the shutdown delays; alloc stop -no-shutdown-delay skips them for one allocation",
	"job restart -no-shutdown-delay":           "drover's job restart waits the shutdown delays of the allocations -reschedule replaces; a restart in place has none",
	"-preserve-resources":                      "drover registers the resources the job file says",
	"operator debug -log-lookback":             "drover's agents keep no journald or log history to look back on: the bundle holds the lines logged during -duration",
	"operator debug -log-file-export":          "drover's agents export no log files: the bundle holds the lines logged during -duration",
}

// refusedPrefixes say why drover refuses the flags whose names start so.
var refusedPrefixes = []struct{ prefix, why string }{
	{"consul-", "drover has no Consul integration"},
	{"vault-", "drover has no Vault integration"},
	{"dev-consul", "drover has no Consul integration"},
	{"dev-vault", "drover has no Vault integration"},
	{"dev-connect", "drover has no Consul Connect"},
	{"eventlog", "drover logs to its output or log_file; there is no Windows event log"},
}

// agentReasons say why drover's agent refuses the rest of Nomad's agent
// flags.
var agentReasons = map[string]string{
	"agent -alloc-dir":                "a client's allocation directories are under its data_dir",
	"agent -alloc-mounts-dir":         "a client's allocation directories are under its data_dir",
	"agent -state-dir":                "a client's state is under its data_dir",
	"agent -encrypt":                  "drover has no gossip to encrypt: servers join over HTTP with the cluster's join token",
	"agent -join":                     "drover has no gossip: a server joins the others with -retry-join HOST:4646 and the cluster's join token",
	"agent -rejoin":                   "drover has no gossip: a server that restarts finds its peers in its Raft state",
	"agent -retry-interval":           "-retry-join retries at drover's own pace until it joins",
	"agent -retry-max":                "-retry-join retries until it joins",
	"agent -raft-protocol":            "drover speaks Raft protocol 3 only",
	"agent -plugin-dir":               "drover's drivers are built in; there are no plugins",
	"agent -host-volume-plugin-dir":   "drover has no dynamic host volumes: a client's host volumes are its host_volume blocks",
	"agent -host-volumes-dir":         "drover has no dynamic host volumes: a client's host volumes are its host_volume blocks",
	"agent -network-speed":            "drover does not schedule network bandwidth",
	"agent -preferred-address-family": "a client advertises the address of -network-interface or -bind",
	"agent -log-include-location":     "drover's log lines do not carry their source location",
}

func init() {
	for k, v := range agentReasons {
		refusedReasons[k] = v
	}
}

// refusedFlag returns the reason drover refuses f, or "" when it honours
// it (or f is nil).
func refusedFlag(f *pflag.Flag) string {
	if f == nil || f.Annotations == nil {
		return ""
	}
	if r := f.Annotations[refusedAnnotation]; len(r) > 0 {
		return r[0]
	}
	return ""
}

// checkRefusedFlags returns the error for the refused flags given to c,
// nil when none is.
func checkRefusedFlags(c *cobra.Command) error {
	var msgs []string
	c.Flags().Visit(func(f *pflag.Flag) {
		if why := refusedFlag(f); why != "" {
			msgs = append(msgs, fmt.Sprintf("-%s is not supported by drover: %s", f.Name, why))
		}
	})
	if len(msgs) == 0 {
		return nil
	}
	sort.Strings(msgs)
	return &exitError{code: 1, msg: "Error: " + strings.Join(msgs, "\nError: ")}
}

// completeNomadFlags adds to each command of the tree under root the flags
// Nomad's command of the same name takes and drover's does not define.
func completeNomadFlags(root *cobra.Command) {
	global := map[string]bool{}
	for _, f := range nomadcompat.GlobalFlags {
		global[f.Name] = true
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		if !c.Runnable() {
			return
		}
		path := strings.TrimPrefix(c.CommandPath(), "drover ")
		flags, ok := nomadcompat.FlagsOf(path)
		if !ok {
			return
		}
		talks := c.Flags().Lookup("address") != nil
		refused := 0
		for _, f := range flags {
			if nomadFlagOf(c, f.Name) != nil {
				continue
			}
			why := ""
			if !global[f.Name] || talks {
				why = refusedReasons[path+" -"+f.Name]
				if why == "" {
					why = refusedReasons["-"+f.Name]
				}
				for _, p := range refusedPrefixes {
					if why == "" && strings.HasPrefix(f.Name, p.prefix) {
						why = p.why
					}
				}
				if why == "" {
					why = fmt.Sprintf("drover's %q does not implement it yet", path)
				}
				if cmdWhy := notYet[path]; cmdWhy != "" {
					why = "the command is not supported by drover yet: " + cmdWhy
				}
			}
			addNomadFlag(c, f, why)
			if why != "" {
				refused++
			}
		}
		if refused == 0 || notYet[path] != "" {
			return // a command drover refuses says so itself
		}
		run := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if err := checkRefusedFlags(cmd); err != nil {
				return err
			}
			if run != nil {
				return run(cmd, args)
			}
			c.Run(cmd, args)
			return nil
		}
	}
	walk(root)
}

// addNomadFlag defines f on c: refused with why, or, when why is empty,
// accepted without effect.
func addNomadFlag(c *cobra.Command, f nomadcompat.Flag, why string) {
	usage := "accepted as Nomad's; no effect: this command does not talk to an agent"
	if why != "" {
		usage = "not supported by drover: " + why
	}
	fs := c.Flags()
	// A one-letter flag ("-n") is a shorthand on the command line.
	short := ""
	if len(f.Name) == 1 && fs.ShorthandLookup(f.Name) == nil {
		short = f.Name
	}
	switch f.Kind {
	case "bool":
		fs.BoolP(f.Name, short, false, usage)
	case "int":
		fs.Int64P(f.Name, short, 0, usage)
	case "float":
		fs.Float64P(f.Name, short, 0, usage)
	case "duration":
		fs.DurationP(f.Name, short, 0, usage)
	case "value":
		fs.StringArrayP(f.Name, short, nil, usage)
	default:
		fs.StringP(f.Name, short, "", usage)
	}
	if why != "" {
		_ = fs.SetAnnotation(f.Name, refusedAnnotation, []string{why})
	} else {
		_ = fs.SetAnnotation(f.Name, noEffectAnnotation, []string{"true"})
	}
}

// nomadFlagOf is the flag of c that Nomad's -name is: the flag of that
// name, or for a one-letter name the flag it is the shorthand of ("-m",
// node drain's -message).
func nomadFlagOf(c *cobra.Command, name string) *pflag.Flag {
	if f := c.Flags().Lookup(name); f != nil {
		return f
	}
	if len(name) == 1 {
		return c.Flags().ShorthandLookup(name)
	}
	return nil
}
