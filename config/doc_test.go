package config

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated part of website/agent-config.md")

const docPath = "../website/agent-config.md"

const (
	beginMark = "<!-- BEGIN unsupported: generated from config/grammar.go by go test ./config -update -->\n"
	endMark   = "<!-- END unsupported -->\n"
)

// unsupportedTable renders the grammar's unsupported settings, errors
// first, each group sorted by path.
func unsupportedTable() string {
	paths := make([]string, 0, len(unsupported))
	for p := range unsupported {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool {
		a, b := unsupported[paths[i]], unsupported[paths[j]]
		if a.refused != b.refused {
			return a.refused
		}
		return paths[i] < paths[j]
	})
	var b strings.Builder
	b.WriteString("| setting | kind | outcome | why |\n|---|---|---|---|\n")
	for _, p := range paths {
		u := unsupported[p]
		kind, outcome := "attribute", "warning"
		if u.block {
			kind = "block"
		}
		if u.refused {
			outcome = "error"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", p, kind, outcome, u.note)
	}
	return b.String()
}

// TestAgentConfigDoc keeps website/agent-config.md in step with the code:
// the unsupported table is generated, and every field and flag is listed.
func TestAgentConfigDoc(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := bytes.Index(doc, []byte(beginMark)), bytes.Index(doc, []byte(endMark))
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the generated-section markers", docPath)
	}
	want := append(append(append([]byte{}, doc[:begin+len(beginMark)]...), unsupportedTable()...), doc[end:]...)
	if *update {
		if err := os.WriteFile(docPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		doc = want
	} else if !bytes.Equal(doc, want) {
		t.Errorf("%s is out of date with config/grammar.go (go test ./config -update)", docPath)
	}
	text := string(doc)
	for _, f := range fields {
		section, name, ok := strings.Cut(f.path, ".")
		if !ok {
			section, name = "", f.path
		}
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(name) + "` \\|.*$")
		part := text
		if section != "" {
			start := strings.Index(text, "## `"+section+"`")
			if start < 0 {
				t.Errorf("%s has no section for %s", docPath, section)
				continue
			}
			part = text[start:]
			if next := strings.Index(part[1:], "\n## "); next >= 0 {
				part = part[:next+1]
			}
		}
		line := row.FindString(part)
		if line == "" {
			t.Errorf("%s does not document %s", docPath, f.path)
			continue
		}
		if f.flag != "" && !strings.Contains(line, "`-"+f.flag) {
			t.Errorf("%s: the row of %s does not name -%s", docPath, f.path, f.flag)
		}
	}
}
