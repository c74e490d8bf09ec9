package jobspec

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

// blockOrder is the order of the unsupported-features page.
var blockOrder = []string{"file", "job", "group", "task", "template", "change_script", "service", "check", "network", "port", "resources",
	"update", "restart", "reschedule", "ephemeral_disk", "logs", "constraint", "affinity", "spread", "target", "variable", "validation"}

// valueRefusals are the refusals made by value rather than by name, for
// the unsupported-features page and the compatibility page.
const valueRefusals = "Other refusals made by value rather than by name: drivers other than `raw_exec`, `exec`, `java`, `docker` and `mock`;\nnetwork `mode` other than `host` and `bridge`; a docker, exec or java `config` key drover does not run (website/drivers/docker.md, website/drivers/exec.md, website/drivers/java.md); more than one `network` block; check types\nother than `http`, `tcp` and `script`; `dynamic` blocks; template functions that read Consul or Vault (`key`,\n`service`, `secret`, `pkiCert`, …: website/jobspec/template.md#functions).\n"

// unsupportedDoc renders the grammar table's refused and ignored elements.
func unsupportedDoc() []byte {
	var b bytes.Buffer
	b.WriteString("# Nomad features drover does not support\n\n")
	b.WriteString("Generated from the grammar table in `jobspec/grammar.go` (`go test ./jobspec -update`).\n\n")
	b.WriteString("- **error**: the job is refused when the element is set — ignoring it would change what the job does.\n")
	b.WriteString("- **warning**: the element is accepted and ignored, with a located warning — under drover it would not\n  change how the job runs.\n\n")
	b.WriteString("An unsupported attribute (or, in API JSON, field) that is null, false, zero, empty, or Nomad's own\ndefault that asks for what drover does anyway (`on_update = \"require_healthy\"`, …) is accepted silently,\nas Nomad's Go client sends such values. Unsupported blocks written in a job file are always reported.\nIn API JSON, fields that Nomad does not define at all are errors that name the field; server-set fields\n(`Status`, `Version`, `CreateIndex`, …) are ignored.\n\n")
	b.WriteString("| block | job file | API JSON | outcome | why |\n|---|---|---|---|---|\n")
	for _, block := range blockOrder {
		for _, e := range grammar[block] {
			if e.Support != refused && e.Support != ignored {
				continue
			}
			outcome := "error"
			if e.Support == ignored {
				outcome = "warning"
			}
			name := func(s string) string {
				if s == "" {
					return "—"
				}
				return "`" + s + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", block, name(e.HCL), name(e.JSON), outcome, e.Note)
		}
	}
	b.WriteString("\n" + valueRefusals)
	return b.Bytes()
}

func TestUnsupportedDoc(t *testing.T) {
	const path = "../website/jobspec/unsupported.md"
	got := unsupportedDoc()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is out of date with the grammar table (go test ./jobspec -update): %v", path, err)
	}
}
