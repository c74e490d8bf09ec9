package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/droverhq/drover/internal/nomadcompat"
)

// findCommand returns the command at path (after "drover") in a fresh
// tree.
func findCommand(t *testing.T, path string) *cobra.Command {
	t.Helper()
	c, rest, err := newRootCommand().Find(strings.Fields(path))
	if err != nil || len(rest) != 0 || strings.TrimPrefix(c.CommandPath(), "drover ") != path {
		t.Fatalf("no command %q in the tree (%v)", path, err)
	}
	return c
}

// flagCounts are the figures of the flag table test.
type flagCounts struct {
	commands          int // drover commands that are Nomad's
	nomad             int // flags Nomad's commands of the same name take
	honoured, refused int // of those, drover's command honours or refuses with a reason
	noEffect          int // global flags of a command that talks to no agent, as Nomad's
	unknown           []string
}

// countNomadFlags walks drover's command tree against the table of Nomad's
// commands and flags (internal/nomadcompat/flags_gen.go).
func countNomadFlags() flagCounts {
	var n flagCounts
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		path := strings.TrimPrefix(c.CommandPath(), "drover ")
		flags, ok := nomadcompat.FlagsOf(path)
		if !ok || !c.Runnable() {
			return
		}
		n.commands++
		for _, f := range flags {
			n.nomad++
			df := nomadFlagOf(c, f.Name)
			switch {
			case df != nil && notYet[path] != "":
				n.refused++ // the command itself is refused with its reason
			case df == nil:
				n.unknown = append(n.unknown, path+" -"+f.Name)
			case refusedFlag(df) != "":
				n.refused++
			case df.Annotations[noEffectAnnotation] != nil:
				n.noEffect++
			default:
				n.honoured++
			}
		}
	}
	walk(newRootCommand())
	sort.Strings(n.unknown)
	return n
}

// TestNomadFlagTable fails when a flag of one of Nomad's commands is
// unknown to drover's command of the same name, or has another kind (a
// bool flag must not take the next argument as its value, nor a valued
// flag go without one). The figures are those of website/nomad-compatibility.md.
func TestNomadFlagTable(t *testing.T) {
	n := countNomadFlags()
	t.Logf("%d of drover's commands are Nomad's; their Nomad flags: %d, honoured %d, without effect as in Nomad %d, refused with a reason %d, unknown %d",
		n.commands, n.nomad, n.honoured, n.noEffect, n.refused, len(n.unknown))
	for _, u := range n.unknown {
		t.Errorf("unknown flag: drover %s", u)
	}
	if n.commands < 60 {
		t.Errorf("only %d of drover's commands found in Nomad's table", n.commands)
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		path := strings.TrimPrefix(c.CommandPath(), "drover ")
		flags, _ := nomadcompat.FlagsOf(path)
		for _, f := range flags {
			df := nomadFlagOf(c, f.Name)
			if df == nil {
				continue
			}
			if kindExceptions[path+" -"+f.Name] != "" || f.Kind == "value" {
				continue // a flag.Value of Nomad's may be a bool (-cleanup-dead-servers)
			}
			if isBool := df.Value.Type() == "bool"; isBool != (f.Kind == "bool") {
				t.Errorf("drover %s -%s: Nomad's is %s, drover's %s", path, f.Name, f.Kind, df.Value.Type())
			}
		}
	}
	walk(newRootCommand())
}

// sampleValue is a value drover's flag f parses ("" for a bool flag).
func sampleValue(f *pflag.Flag) string {
	switch t := f.Value.Type(); {
	case t == "bool":
		return ""
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "3"
	case t == "duration":
		return "5s"
	case t == "true|false":
		return "true"
	}
	return "x"
}

// kindExceptions are flags whose kind differs from Nomad's on purpose.
var kindExceptions = map[string]string{
	// Nomad's -job is a bool that makes the first argument a job; drover's
	// takes the job as its value, which reads Nomad's "-job JOB CMD" the
	// same way.
	"alloc exec -job": "drover's -job takes the job as its value",
}

// TestNomadFlagsParse gives every flag of Nomad's commands to drover's
// command of the same name, as a Nomad user types it (one dash), with -h
// (help, exit 0) and for real: parsing never says "unknown flag", and a
// refused flag is answered with its reason before anything is sent.
func TestNomadFlagsParse(t *testing.T) {
	for path := range droverCommands() {
		flags, ok := nomadcompat.FlagsOf(path)
		if !ok {
			continue
		}
		c := findCommand(t, path)
		var given []string
		var refused []string
		for _, f := range flags {
			if kindExceptions[path+" -"+f.Name] != "" {
				continue
			}
			df := nomadFlagOf(c, f.Name)
			if df == nil {
				continue // TestNomadFlagTable says so
			}
			arg := "-" + f.Name
			if v := sampleValue(df); v != "" {
				arg += "=" + v
			}
			given = append(given, arg)
			if why := refusedFlag(df); why != "" {
				refused = append(refused, "-"+f.Name+" is not supported by drover: "+why)
			}
		}
		args := append(append(strings.Fields(path), given...), "-h")
		var out, errb strings.Builder
		if code := run(args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Errorf("drover %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
		}
		if err := c.ParseFlags(normalizeArgs(given)); err != nil {
			t.Errorf("drover %s %s: %v", path, strings.Join(given, " "), err)
			continue
		}
		err := checkRefusedFlags(c)
		if len(refused) == 0 {
			if err != nil {
				t.Errorf("drover %s: nothing refused, yet %v", path, err)
			}
			continue
		}
		var ec *exitError
		if !errors.As(err, &ec) {
			t.Errorf("drover %s: refused flags answered %v", path, err)
			continue
		}
		for _, r := range refused {
			if !strings.Contains(ec.msg, r) {
				t.Errorf("drover %s: the refusal %q does not say %q", path, ec.msg, r)
			}
		}
	}
}

// TestRefusedFlagAnswered: a refused flag given for real is answered with
// its reason, exit 1, before the command does anything (no agent here).
func TestRefusedFlagAnswered(t *testing.T) {
	var out, errb strings.Builder
	code := run([]string{"job", "run", "-policy-override", "-address=http://127.0.0.1:1", "x.hcl"}, strings.NewReader(""), &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "-policy-override is not supported by drover: Sentinel") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

// TestAllocLogsFlagConflicts: the combinations Nomad refuses are refused
// before any agent is asked.
func TestAllocLogsFlagConflicts(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-tail", "-n", "5", "-c", "100"}, "both -n and -c set"},
		{[]string{"-stderr", "-stdout"}, "Unable to support both stdout and stderr"},
		{[]string{"-f", "-stderr", "-stdout"}, "Unable to support both stdout and stderr"},
	} {
		args := append(append([]string{"alloc", "logs"}, tc.args...), "-address=http://127.0.0.1:1", "abc")
		var out, errb strings.Builder
		if code := run(args, strings.NewReader(""), &out, &errb); code != 1 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// TestJobFileNomadFlags: job run -output prints the registration without
// sending it; -namespace names the namespace of a file that names none;
// -json reads a {"Job": …} envelope; -hcl2-strict=false is refused.
func TestJobFileNomadFlags(t *testing.T) {
	hcl := writeFile(t, "j.hcl", "job \"web\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"raw_exec\"\n      config { command = \"/bin/true\" }\n    }\n  }\n}\n")
	var out, errb strings.Builder
	if code := run([]string{"job", "run", "-output", "-namespace", "dev", "-address=http://127.0.0.1:1", hcl}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("job run -output: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"Job": {`) || !strings.Contains(out.String(), `"Namespace": "dev"`) {
		t.Fatalf("job run -output printed %s", out.String())
	}
	env := writeFile(t, "j.json", out.String())
	out.Reset()
	errb.Reset()
	if code := run([]string{"job", "validate", "-json", env}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("job validate -json of job run -output: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"job", "validate", "-json", hcl}, strings.NewReader(""), &out, &errb); code != 1 || !strings.Contains(errb.String(), "not JSON") {
		t.Fatalf("job validate -json of HCL: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"job", "validate", "-hcl2-strict=false", hcl}, strings.NewReader(""), &out, &errb); code != 1 || !strings.Contains(errb.String(), "-hcl2-strict=false is not supported by drover") {
		t.Fatalf("-hcl2-strict=false: exit %d: %s", code, errb.String())
	}
}

var updateDocs = flag.Bool("update", false, "rewrite website/commands/nomad-flags.md")

const nomadFlagsDoc = "../../website/commands/nomad-flags.md"

// nomadFlagsPage renders website/commands/nomad-flags.md: per command of
// Nomad's that drover has, the flags drover refuses and why, from the tree
// and the table.
func nomadFlagsPage() []byte {
	n := countNomadFlags()
	var b bytes.Buffer
	b.WriteString("# Nomad's flags in drover's commands\n\n")
	b.WriteString("Generated (`go test ./cmd/drover -run TestNomadFlagsDoc -update`) from drover's command tree and the table of\n")
	fmt.Fprintf(&b, "Nomad's commands and flags, `internal/nomadcompat/flags_gen.go`, which `scripts/nomad-flags.sh` reads from\n")
	fmt.Fprintf(&b, "hashicorp/nomad's `command/` sources at `%s` (Nomad %s). A test fails when this page is out of date,\n", nomadcompat.NomadCommit, nomadcompat.NomadVersion)
	b.WriteString("and when a flag of one of Nomad's commands is unknown to drover's command of the same name.\n\n")
	fmt.Fprintf(&b, "%d of drover's commands are Nomad's. Their flags in Nomad, the global flags included: %d. Drover honours %d,\n", n.commands, n.nomad, n.honoured)
	fmt.Fprintf(&b, "accepts %d without effect as Nomad does (the global flags of a command that talks to no agent), and\n", n.noEffect)
	fmt.Fprintf(&b, "refuses %d with the reason, exit status 1, before anything is sent. None is an unknown flag.\n\n", n.refused)
	b.WriteString("The flags refused, command by command (every other flag of Nomad's command is honoured):\n\n")
	b.WriteString("| command | refused | why |\n|---|---|---|\n")
	var walk func(c *cobra.Command)
	var rows []string
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		path := strings.TrimPrefix(c.CommandPath(), "drover ")
		if _, ok := nomadcompat.FlagsOf(path); !ok || !c.Runnable() {
			return
		}
		if why := notYet[path]; why != "" {
			rows = append(rows, fmt.Sprintf("| `%s` | the command | %s |", path, why))
			return
		}
		byWhy := map[string][]string{}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if why := refusedFlag(f); why != "" {
				byWhy[why] = append(byWhy[why], "`-"+f.Name+"`")
			}
		})
		whys := make([]string, 0, len(byWhy))
		for w := range byWhy {
			whys = append(whys, w)
		}
		sort.Strings(whys)
		for _, w := range whys {
			sort.Strings(byWhy[w])
			rows = append(rows, fmt.Sprintf("| `%s` | %s | %s |", path, strings.Join(byWhy[w], " "), strings.ReplaceAll(w, "|", "\\|")))
		}
	}
	walk(newRootCommand())
	sort.Strings(rows)
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	return b.Bytes()
}

// TestNomadFlagsDoc keeps website/commands/nomad-flags.md true.
func TestNomadFlagsDoc(t *testing.T) {
	got := nomadFlagsPage()
	if *updateDocs {
		if err := os.WriteFile(nomadFlagsDoc, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(nomadFlagsDoc)
	if err != nil || !bytes.Equal(want, got) {
		t.Errorf("%s is out of date (go test ./cmd/drover -run TestNomadFlagsDoc -update): %v", nomadFlagsDoc, err)
	}
}

// TestExecValueFlags: every flag of alloc exec that takes a value is in
// execValueFlags, so that its value is not read as the allocation.
func TestExecValueFlags(t *testing.T) {
	c := findCommand(t, "alloc exec")
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() != "bool" && !execValueFlags[f.Name] {
			t.Errorf("alloc exec -%s takes a value but is not in execValueFlags", f.Name)
		}
	})
}
