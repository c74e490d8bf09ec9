package jobspec

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// fnJob is a job file whose job meta "out" holds the JSON encoding of
// expr, evaluated as a local on line 2.
func fnJob(expr string) string {
	return "locals {\n  v = " + expr + "\n}\njob \"f\" {\n  meta {\n    out = jsonencode(local.v)\n  }\n" +
		"  group \"g\" {\n    task \"t\" {\n      driver = \"mock\"\n    }\n  }\n}\n"
}

// evalFn parses fnJob(expr) as dir/fn.hcl and returns the JSON of its value.
func evalFn(t *testing.T, dir, expr string, opts Options) (string, error) {
	t.Helper()
	job, _, err := Parse(filepath.Join(dir, "fn.hcl"), []byte(fnJob(expr)), opts)
	if err != nil {
		return "", err
	}
	return job.Meta["out"], nil
}

// fnCase calls one function from a job file. want is the JSON of the
// value; check, when set, judges the value instead.
type fnCase struct {
	fn    string
	expr  string
	want  string
	check func(t *testing.T, got string)
}

// TestFunctions calls every function a job file may use, at least once
// each, and checks the value it gives.
func TestFunctions(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("beta"), 0o644); err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, &key.PublicKey, []byte("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	saved := now
	now = func() time.Time { return time.Date(2026, 11, 25, 10, 30, 0, 0, time.FixedZone("CET", 3600)) }
	defer func() { now = saved }()
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	uuidRe := regexp.MustCompile(`^"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"$`)

	cases := []fnCase{
		// Collections.
		{fn: "chunklist", expr: `chunklist(["a", "b", "c"], 2)`, want: `[["a","b"],["c"]]`},
		{fn: "coalesce", expr: `coalesce("", "b", "c")`, want: `"b"`},
		{fn: "coalescelist", expr: `coalescelist([], ["x"])`, want: `["x"]`},
		{fn: "compact", expr: `compact(["a", "", "b"])`, want: `["a","b"]`},
		{fn: "concat", expr: `concat(["a"], ["b", "c"])`, want: `["a","b","c"]`},
		{fn: "contains", expr: `contains(["a", "b"], "b")`, want: `true`},
		{fn: "distinct", expr: `distinct(["a", "b", "a"])`, want: `["a","b"]`},
		{fn: "element", expr: `element(["a", "b"], 3)`, want: `"b"`},
		{fn: "flatten", expr: `flatten([["a"], [], ["b", ["c"]]])`, want: `["a","b","c"]`},
		{fn: "index", expr: `index(["a", "b", "c"], "b")`, want: `1`},
		{fn: "keys", expr: `keys({b = 1, a = 2})`, want: `["a","b"]`},
		{fn: "length", expr: `length(tomap({a = 1, b = 2}))`, want: `2`},
		{fn: "lookup", expr: `lookup({a = "x"}, "b", "dflt")`, want: `"dflt"`},
		{fn: "merge", expr: `merge({a = "1"}, {b = "2"}, {a = "3"})`, want: `{"a":"3","b":"2"}`},
		{fn: "range", expr: `range(1, 8, 3)`, want: `[1,4,7]`},
		{fn: "reverse", expr: `reverse([1, 2, 3])`, want: `[3,2,1]`},
		{fn: "setintersection", expr: `setintersection(["a", "b"], ["b", "c"])`, want: `["b"]`},
		{fn: "setproduct", expr: `setproduct(["a"], ["x", "y"])`, want: `[["a","x"],["a","y"]]`},
		{fn: "setsubtract", expr: `setsubtract(["a", "b", "c"], ["b"])`, want: `["a","c"]`},
		{fn: "setunion", expr: `setunion(["b"], ["a"])`, want: `["a","b"]`},
		{fn: "slice", expr: `slice(["a", "b", "c", "d"], 1, 3)`, want: `["b","c"]`},
		{fn: "sort", expr: `sort(["c", "a", "b"])`, want: `["a","b","c"]`},
		{fn: "values", expr: `values({b = 2, a = 1})`, want: `[1,2]`},
		{fn: "zipmap", expr: `zipmap(["a", "b"], [1, 2])`, want: `{"a":1,"b":2}`},
		// Type conversion.
		{fn: "can", expr: `can(regex("^[0-9]+$", "x1"))`, want: `false`},
		{fn: "try", expr: `try(tonumber("x"), 7)`, want: `7`},
		{fn: "convert", expr: `convert(["a", 3], list(string))`, want: `["a","3"]`},
		{fn: "tobool", expr: `tobool("true")`, want: `true`},
		{fn: "tonumber", expr: `tonumber("42")`, want: `42`},
		{fn: "tostring", expr: `tostring(42)`, want: `"42"`},
		{fn: "tolist", expr: `tolist(["a", 1])`, want: `["a","1"]`},
		{fn: "toset", expr: `toset(["b", "a", "b"])`, want: `["a","b"]`},
		{fn: "tomap", expr: `tomap({a = 1, b = "x"})`, want: `{"a":"1","b":"x"}`},
		// Hash and crypto.
		{fn: "bcrypt", expr: `bcrypt("hunter2")`, check: func(t *testing.T, got string) {
			hash := strings.Trim(got, `"`)
			if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte("hunter2")); err != nil {
				t.Errorf("bcrypt gave %s, which does not match its password: %v", got, err)
			}
		}},
		{fn: "md5", expr: `md5("hello")`, want: `"5d41402abc4b2a76b9719d911017c592"`},
		{fn: "rsadecrypt", expr: `rsadecrypt("` + base64.StdEncoding.EncodeToString(ct) + `", <<EOK
` + string(keyPEM) + `EOK
)`, want: `"s3cret"`},
		{fn: "sha1", expr: `sha1("hello")`, want: `"aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"`},
		{fn: "sha256", expr: `sha256("hello")`, want: `"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"`},
		{fn: "sha512", expr: `sha512("hello")`, want: `"9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043"`},
		// Date and time.
		{fn: "formatdate", expr: `formatdate("YYYY-MM-DD hh:mm", "2026-11-25T10:30:00Z")`, want: `"2026-11-25 10:30"`},
		{fn: "timeadd", expr: `timeadd("2026-11-25T10:30:00Z", "90m")`, want: `"2026-11-25T12:00:00Z"`},
		{fn: "timestamp", expr: `timestamp()`, want: `"2026-11-25T09:30:00Z"`},
		// Encoding.
		{fn: "base64decode", expr: `base64decode("aGVsbG8=")`, want: `"hello"`},
		{fn: "base64encode", expr: `base64encode("hello")`, want: `"aGVsbG8="`},
		{fn: "csvdecode", expr: `csvdecode("a,b\n1,2\n")`, want: `[{"a":"1","b":"2"}]`},
		{fn: "jsondecode", expr: `jsondecode("{\"a\": [1, true]}")`, want: `{"a":[1,true]}`},
		{fn: "jsonencode", expr: `jsonencode({a = "x"})`, want: `"{\"a\":\"x\"}"`},
		{fn: "urlencode", expr: `urlencode("a b&c")`, want: `"a+b%26c"`},
		{fn: "yamldecode", expr: `yamldecode("a: [1, x]\nb: true\n")`, want: `{"a":[1,"x"],"b":true}`},
		{fn: "yamlencode", expr: `yamlencode({a = ["x"]})`, want: `"\"a\":\n- \"x\"\n"`},
		// Filesystem, relative to the job file's directory.
		{fn: "abspath", expr: `abspath("x/y")`, want: jsonString(filepath.Join(wd, "x/y"))},
		{fn: "basename", expr: `basename("/srv/app/run.sh")`, want: `"run.sh"`},
		{fn: "dirname", expr: `dirname("/srv/app/run.sh")`, want: `"/srv/app"`},
		{fn: "file", expr: `file("a.txt")`, want: `"alpha\n"`},
		{fn: "fileexists", expr: `[fileexists("b.txt"), fileexists("c.txt")]`, want: `[true,false]`},
		{fn: "fileset", expr: `fileset(".", "*.txt")`, want: `["a.txt","b.txt"]`},
		{fn: "pathexpand", expr: `pathexpand("~/x")`, want: jsonString(filepath.Join(home, "x"))},
		// IP networks.
		{fn: "cidrhost", expr: `cidrhost("10.12.112.0/20", 16)`, want: `"10.12.112.16"`},
		{fn: "cidrnetmask", expr: `cidrnetmask("172.16.0.0/12")`, want: `"255.240.0.0"`},
		{fn: "cidrsubnet", expr: `cidrsubnet("172.16.0.0/12", 4, 2)`, want: `"172.18.0.0/16"`},
		{fn: "cidrsubnets", expr: `cidrsubnets("10.1.0.0/16", 4, 4, 8)`, want: `["10.1.0.0/20","10.1.16.0/20","10.1.32.0/24"]`},
		// Numbers.
		{fn: "abs", expr: `abs(-3.5)`, want: `3.5`},
		{fn: "ceil", expr: `ceil(4.1)`, want: `5`},
		{fn: "floor", expr: `floor(4.9)`, want: `4`},
		{fn: "int", expr: `int(-4.9)`, want: `-4`},
		{fn: "log", expr: `log(8, 2)`, want: `3`},
		{fn: "max", expr: `max(3, 12, 9)`, want: `12`},
		{fn: "min", expr: `min(3, 12, 9)`, want: `3`},
		{fn: "parseint", expr: `parseint("ff", 16)`, want: `255`},
		{fn: "pow", expr: `pow(2, 10)`, want: `1024`},
		{fn: "signum", expr: `signum(-7)`, want: `-1`},
		// Strings.
		{fn: "chomp", expr: `chomp("x\n\n")`, want: `"x"`},
		{fn: "format", expr: `format("%s-%03d", "web", 7)`, want: `"web-007"`},
		{fn: "formatlist", expr: `formatlist("%s:%d", ["a", "b"], [1, 2])`, want: `["a:1","b:2"]`},
		{fn: "indent", expr: `indent(2, "a\nb")`, want: `"a\n  b"`},
		{fn: "join", expr: `join(",", ["a", "b"])`, want: `"a,b"`},
		{fn: "lower", expr: `lower("ABC")`, want: `"abc"`},
		{fn: "upper", expr: `upper("abc")`, want: `"ABC"`},
		{fn: "regex", expr: `regex("v([0-9]+)", "app-v12")`, want: `["12"]`},
		{fn: "regexall", expr: `regexall("[0-9]+", "a1b22c333")`, want: `["1","22","333"]`},
		{fn: "regex_replace", expr: `regex_replace("a1b22", "[0-9]+", "#")`, want: `"a#b#"`},
		{fn: "replace", expr: `replace("a-b-c", "-", "+")`, want: `"a+b+c"`},
		{fn: "split", expr: `split(",", "a,b")`, want: `["a","b"]`},
		{fn: "strlen", expr: `strlen("héllo")`, want: `5`},
		{fn: "strrev", expr: `strrev("abc")`, want: `"cba"`},
		{fn: "substr", expr: `substr("hello", 1, 3)`, want: `"ell"`},
		{fn: "title", expr: `title("hello world")`, want: `"Hello World"`},
		{fn: "trim", expr: `trim("?!x!?", "!?")`, want: `"x"`},
		{fn: "trimprefix", expr: `trimprefix("v1.2", "v")`, want: `"1.2"`},
		{fn: "trimsuffix", expr: `trimsuffix("app.hcl", ".hcl")`, want: `"app"`},
		{fn: "trimspace", expr: `trimspace("  x \n")`, want: `"x"`},
		// UUIDs.
		{fn: "uuidv4", expr: `uuidv4()`, check: func(t *testing.T, got string) {
			if !uuidRe.MatchString(got) {
				t.Errorf("uuidv4() = %s, not a version 4 UUID", got)
			}
		}},
		{fn: "uuidv5", expr: `uuidv5("dns", "drover.example")`, want: `"` + uuidV5DNS("drover.example") + `"`},
	}

	called := map[string]bool{}
	for _, c := range cases {
		called[c.fn] = true
		t.Run(c.fn, func(t *testing.T) {
			got, err := evalFn(t, dir, c.expr, Options{AllowFS: true})
			if err != nil {
				t.Fatalf("%s: %v", c.expr, err)
			}
			if c.check != nil {
				c.check(t, got)
				return
			}
			if got != c.want {
				t.Errorf("%s = %s, want %s", c.expr, got, c.want)
			}
		})
	}
	// Every function a job file may call is tested above.
	for name := range jobFunctions("x.hcl", Options{AllowFS: true}) {
		if !called[name] {
			t.Errorf("function %s has no case in TestFunctions", name)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// uuidV5DNS is the name-based UUID of name in the DNS namespace (RFC 4122
// section 4.3), computed here by hand to check uuidv5.
func uuidV5DNS(name string) string {
	ns := []byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	sum := sha1.Sum(append(ns, name...))
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// TestFunctionErrors: a bad call is an error at the call's file and line,
// and parsing goes on to report the others.
func TestFunctionErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, expr, msg string
	}{
		{"bad cidr", `cidrsubnet("10.0.0.0", 8, 1)`, "invalid CIDR address"},
		{"subnet out of range", `cidrsubnet("10.0.0.0/8", 8, 300)`, "prefix extension of 8 does not accommodate a subnet numbered 300"},
		{"bad base64", `base64decode("%%%")`, "failed to decode base64 data"},
		{"bad yaml", `yamldecode("a: [1")`, "did not find expected ',' or ']'"},
		{"bad json", `jsondecode("{")`, "Call to function \"jsondecode\" failed"},
		{"index not found", `index(["a"], "z")`, "item not found"},
		{"wrong argument type", `upper(["a"])`, "Invalid function argument"},
		{"too few arguments", `formatdate("YYYY")`, "Not enough function arguments"},
		{"missing file", `file("nope.txt")`, "no file exists at"},
		{"unknown function", `uuidv7()`, "There is no function named \"uuidv7\""},
		{"bad date", `timeadd("yesterday", "1h")`, "not a valid RFC3339 timestamp"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := evalFn(t, dir, c.expr, Options{AllowFS: true})
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("%s: want *Errors, got %v", c.expr, err)
			}
			found := false
			for _, d := range errs.Diagnostics {
				if d.Line == 2 && strings.HasSuffix(d.File, "fn.hcl") && strings.Contains(d.Message, c.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: want an error at fn.hcl:2 containing %q, got:\n%v", c.expr, c.msg, err)
			}
		})
	}
}

// TestFilesystemFunctionsDisabled: where the agent parses a job file
// (AllowFS unset), every filesystem function fails with a located error
// and reads nothing.
func TestFilesystemFunctionsDisabled(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, expr := range []string{`file("a.txt")`, `fileexists("a.txt")`, `fileset(".", "*")`, `abspath("a")`,
		`basename("/a/b")`, `dirname("/a/b")`, `pathexpand("~")`} {
		_, err := evalFn(t, dir, expr, Options{})
		if err == nil || !strings.Contains(err.Error(), "fn.hcl:2:") || !strings.Contains(err.Error(), "filesystem functions are disabled") {
			t.Errorf("%s without AllowFS: want a located 'disabled' error, got %v", expr, err)
		}
	}
	names := slices.Clone(fileFunctionNames)
	slices.Sort(names)
	if !slices.Equal(names, []string{"abspath", "basename", "dirname", "file", "fileexists", "fileset", "pathexpand"}) {
		t.Errorf("fileFunctionNames = %v", names)
	}
}

// TestFileBaseDir: relative paths are read from BaseDir when it is given.
func TestFileBaseDir(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "c.txt"), []byte("gamma"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := evalFn(t, dir, `file("c.txt")`, Options{AllowFS: true, BaseDir: other})
	if err != nil || got != `"gamma"` {
		t.Errorf(`file("c.txt") with BaseDir = %s, %v; want "gamma"`, got, err)
	}
	if _, err := evalFn(t, dir, `file("c.txt")`, Options{AllowFS: true}); err == nil {
		t.Error(`file("c.txt") read from the job file's directory found a file that is not there`)
	}
}
