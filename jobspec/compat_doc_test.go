package jobspec

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/nomadcompat"
)

// compatBlocks returns every block of the grammar table: those of the
// unsupported-features page in its order, then any other, by name, so that
// a block added to the grammar appears without a change here.
func compatBlocks() []string {
	out := slices.Clone(blockOrder)
	var rest []string
	for b := range grammar {
		if !slices.Contains(out, b) {
			rest = append(rest, b)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// compatStatus names what drover does with an element.
func compatStatus(e element) string {
	switch e.Support {
	case refused:
		return "not supported (error)"
	case ignored:
		return "ignored (warning)"
	case serverSet:
		return "set by the servers"
	}
	return "supported"
}

// compatibilityDoc renders website/nomad-compatibility.md: the whole job
// grammar, the HCL functions and Nomad's CLI commands, each with drover's
// status.
func compatibilityDoc() []byte {
	var b bytes.Buffer
	code := func(s string) string {
		if s == "" {
			return "—"
		}
		return "`" + s + "`"
	}
	b.WriteString("# Nomad compatibility\n\n")
	b.WriteString("What drover does with each element of Nomad's job specification and each of Nomad's CLI commands.\n")
	b.WriteString("Generated (`go test ./jobspec -update`) from the grammar table in `jobspec/grammar.go`, which the\n")
	b.WriteString("job-file decoder and the API JSON walker read, from the job-file functions, and from the command\n")
	b.WriteString("table in `internal/nomadcompat`, which a test checks against drover's command tree. A test fails\n")
	b.WriteString("when this page is out of date. The last part, [Nomad's own API tests](#nomads-own-api-tests), is\n")
	b.WriteString("written by hand: how much of the test suite of Nomad's Go client passes against drover.\n\n")

	b.WriteString("## Job specification\n\n")
	b.WriteString("- **supported**: decoded and run as Nomad documents it; the notes say where drover differs.\n")
	b.WriteString("- **not supported (error)**: a job that sets it is refused with a located error naming the element\n  (`FILE:LINE:COL`, or the JSON path in API JSON) — ignoring it would change what the job does.\n")
	b.WriteString("- **ignored (warning)**: accepted with a located warning — under drover it would not change how the\n  job runs.\n")
	b.WriteString("- **set by the servers**: API JSON only; a submitted value is ignored.\n\n")
	b.WriteString("A zero, null or empty value of an element drover does not support, or Nomad's own default, is\n")
	b.WriteString("accepted silently ([details](jobspec/unsupported.md)). `zones` is drover's own block\n")
	b.WriteString("([rollouts](rollouts.md#zones)).\n\n")
	counts := map[string]int{}
	for _, block := range compatBlocks() {
		fmt.Fprintf(&b, "### `%s`\n\n", block)
		b.WriteString("| job file | API JSON | status | notes |\n|---|---|---|---|\n")
		for _, e := range grammar[block] {
			status := compatStatus(e)
			counts[status]++
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", code(e.HCL), code(e.JSON), status, e.Note)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "In all: %d supported, %d not supported, %d ignored, %d set by the servers.\n\n",
		counts["supported"], counts["not supported (error)"], counts["ignored (warning)"], counts["set by the servers"])
	b.WriteString(valueRefusals)
	b.WriteString("\n")

	b.WriteString("## HCL functions\n\n")
	b.WriteString("Every one of Nomad's HCL2 functions is supported, under Nomad's names ([functions](jobspec/functions.md)).\n")
	b.WriteString("The filesystem functions read beside the job file in the CLI and are errors in the agent's\n`/v1/jobs/parse`, as Nomad's.\n\n")
	names := make([]string, 0, len(functions())+len(fileFunctionNames))
	for n := range jobFunctions("x.hcl", Options{AllowFS: true}) {
		names = append(names, "`"+n+"`")
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "%s.\n\n", strings.Join(names, ", "))

	b.WriteString("## CLI commands\n\n")
	b.WriteString("`nomad X` and `drover X` take the same arguments and print the same output where the command's page\n")
	b.WriteString("under [commands](commands/index.md) does not say otherwise. Nomad's official CLI also works against a\n")
	b.WriteString("drover agent (`NOMAD_ADDR`) for the commands whose endpoints drover serves. Enterprise commands\n")
	b.WriteString("and the deprecated top-level aliases (`nomad run`, …) are left out.\n\n")
	nflags := 0
	for _, c := range nomadcompat.NomadFlags {
		nflags += len(c.Flags)
	}
	fmt.Fprintf(&b, "Every flag of Nomad's command of the same name is a flag of drover's, with Nomad's global flags on every\n")
	fmt.Fprintf(&b, "command that talks to an agent: drover honours it with Nomad's meaning, or accepts it and refuses it\n")
	fmt.Fprintf(&b, "with the reason, never as an unknown flag. The table of Nomad's commands and flags (%d commands, %d flags\n", len(nomadcompat.NomadFlags), nflags)
	fmt.Fprintf(&b, "of their own and %d global ones) is read from Nomad %s's sources (commit `%.12s`) by\n", len(nomadcompat.GlobalFlags), nomadcompat.NomadVersion, nomadcompat.NomadCommit)
	b.WriteString("`scripts/nomad-flags.sh`, and a test walks drover's command tree against it; the flags drover refuses,\n")
	b.WriteString("command by command, are in [nomad-flags](commands/nomad-flags.md). A command `refused with the reason`\n")
	b.WriteString("takes Nomad's flags and answers with an error that says why drover does not run it yet.\n\n")
	b.WriteString("| command | status | notes |\n|---|---|---|\n")
	supported, notYet := 0, 0
	for _, c := range nomadcompat.Commands {
		switch c.Status {
		case nomadcompat.Supported:
			supported++
		case nomadcompat.NotYet:
			notYet++
		}
		fmt.Fprintf(&b, "| `nomad %s` | %s | %s |\n", c.Path, c.Status, c.Note)
	}
	fmt.Fprintf(&b, "\n%d of Nomad's %d commands are supported, %d refused with the reason. Drover's own:\n\n", supported, len(nomadcompat.Commands), notYet)
	b.WriteString("| command | notes |\n|---|---|\n")
	for _, c := range nomadcompat.DroverOnly {
		fmt.Fprintf(&b, "| `drover %s` | %s |\n", c.Path, c.Note)
	}
	return b.Bytes()
}

// handWrittenMark starts the part of website/nomad-compatibility.md that is
// written by hand.
const handWrittenMark = "<!-- Written by hand from here on: go test ./jobspec -update keeps what follows. -->\n"

// TestCompatibilityDoc: website/nomad-compatibility.md is what the grammar
// table, the functions and the command table say (-update rewrites it).
//
// The page goes on, after handWrittenMark, with what is written by hand
// (Nomad's own API test suite against drover): -update keeps it as it is.
func TestCompatibilityDoc(t *testing.T) {
	const path = "../website/nomad-compatibility.md"
	want, err := os.ReadFile(path)
	got := compatibilityDoc()
	if i := bytes.Index(want, []byte(handWrittenMark)); i >= 0 {
		got = append(append(got, '\n'), want[i:]...)
	}
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is out of date with the grammar table or internal/nomadcompat (go test ./jobspec -update): %v", path, err)
	}
}

// TestCompatibilityDocCoversGrammar walks the grammar: every element of
// every block has its row on the page, with its status.
func TestCompatibilityDocCoversGrammar(t *testing.T) {
	doc := string(compatibilityDoc())
	for block, elems := range grammar {
		start := strings.Index(doc, "### `"+block+"`\n")
		if start < 0 {
			t.Errorf("block %s has no section", block)
			continue
		}
		section := doc[start:]
		if end := strings.Index(section[4:], "### "); end >= 0 {
			section = section[:end+4]
		}
		for _, e := range elems {
			name := e.HCL
			if name == "" {
				name = e.JSON
			}
			row := func(s string) string {
				if s == "" {
					return "—"
				}
				return "`" + s + "`"
			}
			want := fmt.Sprintf("| %s | %s | %s |", row(e.HCL), row(e.JSON), compatStatus(e))
			if !strings.Contains(section, want) {
				t.Errorf("%s.%s: no row %q", block, name, want)
			}
		}
	}
}
