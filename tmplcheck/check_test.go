package tmplcheck

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name, text, left, right string
		want                    error
		msg                     string
	}{
		{"env and nomadVar", `{{ env "NOMAD_PORT_http" }}{{ with nomadVar "nomad/jobs/web" }}{{ .pass }}{{ end }}`, "", "", nil, ""},
		{"sprig and pipes", `{{ "x" | sprig_upper | toJSON }}{{ range $i, $s := nomadService "db" }}{{ $s.Address }}{{ end }}`, "", "", nil, ""},
		{"define and template", `{{ define "a" }}{{ timestamp }}{{ end }}{{ template "a" }}`, "", "", nil, ""},
		{"delimiters", `[[ env "HOME" ]] {{ not a call }}`, "[[", "]]", nil, ""},
		{"consul key", `{{ key "app/config" }}`, "", "", ErrRefusedFunction, `"key" reads Consul`},
		{"vault secret in a range", `{{ range $x := ls "x" }}{{ end }}`, "", "", ErrRefusedFunction, `"ls" reads Consul`},
		{"vault pkiCert", `{{ with pkiCert "pki/issue/x" }}{{ .Cert }}{{ end }}`, "", "", ErrRefusedFunction, `"pkiCert" reads Vault`},
		{"unknown", `{{ nomadVariable "x" }}`, "", "", ErrUnknownFunction, `did you mean "nomadVar"?`},
		{"syntax", `{{ env "x" `, "", "", ErrSyntax, "unclosed action"},
		{"template recursion", `{{ define "a" }}{{ if 1 }}{{ template "a" }}{{ end }}{{ end }}{{ template "a" }}`, "", "", ErrRecursion, `template "a" calls itself`},
		{"executeTemplate recursion", `{{ define "a" }}{{ executeTemplate "a" }}{{ end }}{{ executeTemplate "a" }}`, "", "", ErrRecursion, `executeTemplate "a"`},
		{"mutual recursion", `{{ define "a" }}{{ template "b" }}{{ end }}{{ define "b" }}{{ template "a" }}{{ end }}{{ template "a" }}`, "", "", ErrRecursion, "calls itself"},
		{"computed name is the client's to judge", `{{ define "a" }}x{{ end }}{{ executeTemplate (printf "%s" "a") }}`, "", "", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.text, c.left, c.right)
			if c.want == nil {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("Check = %v, want %v containing %q", err, c.want, c.msg)
			}
		})
	}
}

func TestRefusedAreEngineFunctions(t *testing.T) {
	// The refused list names functions the engine has: were one renamed
	// upstream, it would no longer be refused by name.
	for name := range Refused {
		if !Defined(name) {
			t.Errorf("%s is not a function of the engine", name)
		}
	}
	if Defined("noSuchFunction") || Defined("x}}{{") {
		t.Fatal("Defined accepts undefined names")
	}
}

// BenchmarkCheck: checking a typical template when a job is validated.
func BenchmarkCheck(b *testing.B) {
	text := `{{ with nomadVar "nomad/jobs/web" }}pass={{ .pass }}{{ end }}
port={{ env "NOMAD_PORT_http" }}
{{ range nomadService "db" }}{{ .Address }}:{{ .Port }}{{ end }}
{{ "x" | toJSON | sprig_upper }}`
	for b.Loop() {
		if err := Check(text, "", ""); err != nil {
			b.Fatal(err)
		}
	}
}
