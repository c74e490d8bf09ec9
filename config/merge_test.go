package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/spf13/pflag"
)

func writeFile(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMergeTwoFilesAndFlags(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.hcl", `
data_dir  = "/a"
log_level = "DEBUG"
log_json  = true
server {
  enabled          = true
  bootstrap_expect = 3
  retry_join       = ["127.0.0.1:1", "127.0.0.1:2"]
}
client {
  enabled = true
  meta = { zone = "a", rack = "r1" }
}
`)
	b := writeFile(t, dir, "b.hcl", `
log_json = false
server {
  retry_join = ["127.0.0.1:3"]
}
client {
  meta = { zone = "b" }
}
ports {
  http = 5646
}
`)
	c, warns, err := Load(Default(), a, b)
	if err != nil || len(warns) > 0 {
		t.Fatalf("load: %v %v", err, warns)
	}
	// b wrote log_json = false: its zero value wins because it was written.
	if c.LogJSON {
		t.Error("log_json = false in the later file did not override true")
	}
	// b left log_level, data_dir and bootstrap_expect out: a's stay.
	if c.LogLevel != "DEBUG" || c.DataDir != "/a" || c.Server.BootstrapExpect != 3 || !c.Server.Enabled {
		t.Errorf("fields b leaves out were clobbered: %+v", c)
	}
	if !reflect.DeepEqual(c.Server.RetryJoin, []string{"127.0.0.1:3"}) {
		t.Errorf("retry_join %v: a later list replaces the earlier one", c.Server.RetryJoin)
	}
	if !reflect.DeepEqual(c.Client.Meta, map[string]string{"zone": "b", "rack": "r1"}) {
		t.Errorf("meta %v: maps merge key by key", c.Client.Meta)
	}
	if c.Ports.HTTP != 5646 || c.Ports.Raft != DefaultRaftPort || c.Region != DefaultRegion {
		t.Errorf("ports %+v region %q: defaults lost", c.Ports, c.Region)
	}
	if l, _ := c.Where("log_json"); l.File != b || l.Line != 2 {
		t.Errorf("log_json located at %v, want %s:2", l, b)
	}
	if l, _ := c.Where("log_level"); l.File != a {
		t.Errorf("log_level located at %v, want %s", l, a)
	}

	// Flags come last and win over both files.
	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	fs.Int("bootstrap-expect", 0, "")
	fs.String("data-dir", "", "")
	fs.StringArray("retry-join", nil, "")
	fs.String("log-level", "info", "")
	fs.String("http-addr", "127.0.0.1:4646", "")
	fs.Bool("log-json", false, "")
	if err := fs.Parse([]string{"--bootstrap-expect=5", "--retry-join=127.0.0.1:7", "--retry-join=127.0.0.1:8", "--http-addr=127.0.0.2:6000", "--log-json=false"}); err != nil {
		t.Fatal(err)
	}
	flags, err := FromFlags(fs)
	if err != nil {
		t.Fatal(err)
	}
	c = c.Merge(flags)
	if c.Server.BootstrapExpect != 5 || !reflect.DeepEqual(c.Server.RetryJoin, []string{"127.0.0.1:7", "127.0.0.1:8"}) {
		t.Errorf("flags did not win: %+v", c.Server)
	}
	if c.HTTPAddr() != "127.0.0.2:6000" {
		t.Errorf("HTTPAddr %s after -http-addr", c.HTTPAddr())
	}
	// Flags not given do not override: -log-level keeps the file's value
	// although the flag has a default.
	if c.LogLevel != "DEBUG" || c.DataDir != "/a" {
		t.Errorf("flags not given overrode files: log_level %q data_dir %q", c.LogLevel, c.DataDir)
	}
	if l, _ := c.Where("server.bootstrap_expect"); l.String() != "-bootstrap-expect" {
		t.Errorf("bootstrap_expect located at %q", l)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("merged config invalid: %v", err)
	}
}

func TestMergeDoesNotModifyInputs(t *testing.T) {
	a := mustParse(t, "client {\n  meta = { a = \"1\" }\n}\nserver {\n  retry_join = [\"x:1\"]\n}\n")
	b := mustParse(t, "client {\n  meta = { b = \"2\" }\n}\n")
	m := a.Merge(b)
	m.Client.Meta["c"] = "3"
	m.Server.RetryJoin[0] = "changed"
	if len(a.Client.Meta) != 1 || len(b.Client.Meta) != 1 || a.Server.RetryJoin[0] != "x:1" {
		t.Errorf("Merge shares state with its inputs: a %+v b %+v", a.Client, b.Client)
	}
	if a.IsSet("client.enabled") || !m.IsSet("client.meta") || !m.IsSet("server.retry_join") {
		t.Error("set-tracking wrong after merge")
	}
	if got := a.Merge(nil); !equalConfig(got, a) {
		t.Error("Merge(nil) is not a copy")
	}
}

func TestMergeDev(t *testing.T) {
	c := DevConfig().Merge(mustParse(t, "log_level = \"debug\"\n"))
	if !c.Dev || c.LogLevel != "debug" || !c.Server.Enabled || c.Server.BootstrapExpect != 1 {
		t.Errorf("dev merge %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("dev + file: %v", err)
	}
}

func TestLoadReportsEveryFile(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.hcl", "nmae = \"x\"\n")
	b := writeFile(t, dir, "b.hcl", "\nports {\n  http = \"x\"\n}\n")
	_, _, err := Load(Default(), a, b)
	ds := diagsOf(t, err)
	if len(ds) != 2 || ds[0].File != a || ds[1].File != b || ds[1].Line != 3 {
		t.Errorf("diagnostics %v", err)
	}
	if _, _, err := Load(Default(), filepath.Join(dir, "missing.hcl")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		next := u.Unwrap()
		if next == nil {
			return err
		}
		err = next
	}
}

func TestSet(t *testing.T) {
	c := &Config{}
	if err := c.Set("server.bootstrap_expect", "-bootstrap-expect", "x"); err == nil {
		t.Error("non-number accepted")
	}
	if err := c.Set("server.retry_jion", "x", "a"); err == nil || !errorsIs(err, ErrUnknownField) {
		t.Errorf("unknown field: %v", err)
	}
	if err := c.Set("client.meta", "-meta", "zone=a", "rack=b"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("client.meta", "-meta", "novalue"); err == nil {
		t.Error("meta without = accepted")
	}
	if c.Client.Meta["zone"] != "a" || c.Client.Meta["rack"] != "b" {
		t.Errorf("meta %v", c.Client.Meta)
	}
	if err := c.Set("name", "-node", "a", "b"); err == nil {
		t.Error("two values for a scalar accepted")
	}
	for _, p := range Fields() {
		if fieldByPath[p] == nil {
			t.Errorf("Fields lists %q which fieldByPath lacks", p)
		}
	}
}

func TestFromFlagsBadValues(t *testing.T) {
	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	fs.String("http-addr", "", "")
	fs.StringArray("meta", nil, "")
	fs.Bool("dev", false, "")
	fs.String("unrelated", "", "")
	if err := fs.Parse([]string{"--http-addr=nope", "--meta=bad", "--dev", "--unrelated=x"}); err != nil {
		t.Fatal(err)
	}
	_, err := FromFlags(fs)
	ds := diagsOf(t, err)
	if len(ds) != 2 {
		t.Fatalf("want 2 problems, got %v", err)
	}
	wantDiag(t, ds, `-http-addr must be host:port (got "nope")`, 0)
	wantDiag(t, ds, `client.meta takes key=value pairs (got "bad")`, 0)

	fs = pflag.NewFlagSet("agent", pflag.ContinueOnError)
	fs.Bool("dev", false, "")
	fs.Bool("client", false, "")
	if err := fs.Parse([]string{"--dev", "--client"}); err != nil {
		t.Fatal(err)
	}
	c, err := FromFlags(fs)
	if err != nil || !c.Dev || !c.Client.Enabled || !c.IsSet("client.enabled") {
		t.Errorf("dev/client flags: %+v %v", c, err)
	}
}

func TestNilInputs(t *testing.T) {
	var c *Config
	m := c.Merge(mustParse(t, "name = \"x\"\n"))
	if m.Name != "x" || !m.IsSet("name") {
		t.Errorf("nil.Merge: %+v", m)
	}
	l, _, err := Load(nil)
	if err != nil || !equalConfig(l, Default()) {
		t.Errorf("Load(nil): %+v %v", l, err)
	}
}
