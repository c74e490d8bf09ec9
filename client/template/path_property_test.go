package template

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// TestPropertyPathsStayInside: random meta values interpolated into
// destinations and sources (${NOMAD_META_d}, the directory variables,
// "..", absolute paths, the links of escapeLayout): every template either
// fails its task or writes inside the allocation, and no source or file
// read returns the host's marker.
func TestPropertyPathsStayInside(t *testing.T) {
	words := []string{"..", ".", "local", "alloc", "secrets", "root", "up", "secret", "hostdir", "new", "${NOMAD_TASK_DIR}", "${NOMAD_ALLOC_DIR}", "${NOMAD_SECRETS_DIR}", "${NOMAD_META_d}", ""}
	var rendered, failed int
	for seed := uint64(0); seed < 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 13))
		cfg, dir, marker := escapeLayout(t)
		randPath := func() string {
			parts := make([]string, 1+rng.IntN(4))
			for i := range parts {
				parts[i] = words[rng.IntN(len(words))]
			}
			p := strings.Join(parts, "/")
			if rng.IntN(5) == 0 {
				p = "/" + p
			}
			return p
		}
		meta := randPath()
		if rng.IntN(4) == 0 {
			meta = strings.Repeat("../", 1+rng.IntN(8)) + strings.TrimPrefix(dir, "/")
		}
		cfg.Env = map[string]string{"NOMAD_META_d": meta}
		tmpl := &structs.Template{DestPath: randPath() + "/out", ChangeMode: "noop"}
		switch rng.IntN(3) {
		case 0:
			tmpl.SourcePath = randPath()
		case 1:
			tmpl.EmbeddedTmpl = `{{ file "` + randPath() + `" }}`
		default:
			tmpl.EmbeddedTmpl = "rendered"
		}
		cfg.Templates = []*structs.Template{tmpl}
		cfg.Lifecycle = &lifecycle{}
		m, err := New(cfg)
		if err == nil {
			_, err = prestart(t, m)
			m.Stop()
		}
		if err != nil {
			failed++
			if strings.Contains(err.Error(), "HOST SECRET") {
				t.Fatalf("seed %d: the error shows the marker's content: %v", seed, err)
			}
		} else {
			rendered++
		}
		checkMarker(t, dir, marker)
		// Nothing rendered holds the marker's content.
		filepath.WalkDir(cfg.AllocRoot, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("HOST SECRET")) {
					t.Fatalf("seed %d: %s holds the host's marker (template %+v, meta %q)", seed, p, tmpl, meta)
				}
			}
			return nil
		})
		if t.Failed() {
			t.Fatalf("seed %d: template %+v, meta %q", seed, tmpl, meta)
		}
	}
	if rendered < 5 || failed < 5 {
		t.Fatalf("%d rendered, %d failed: the generator needs widening", rendered, failed)
	}
}
