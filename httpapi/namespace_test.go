package httpapi

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// A request's namespace is resolved from the query and the body's
// Namespace keys; disagreeing names and a write's "*" are refused; the
// request the handler gets says only the resolved namespace.
func TestResolveNamespace(t *testing.T) {
	scale := route{pattern: "POST /v1/job/{id}/scale", kind: writeRoute, need: nsCap("scale-job")}
	search := route{pattern: "POST /v1/search", kind: readRoute, need: nsCap("list-jobs")}
	list := route{pattern: "GET /v1/jobs", kind: readRoute, need: nsCap("list-jobs")}
	acl := route{pattern: "PUT /v1/acl/token", kind: writeRoute, need: management}
	for _, tc := range []struct {
		name        string
		rt          route
		method, url string
		body        string
		want        string // the resolved namespace, or the error's text
		wantErr     bool
		// wantBody: keys of the rewritten body that must say want.
		wantBody []string
	}{
		{"nothing", scale, "POST", "/v1/job/web/scale", `{"Count":1}`, "default", false, nil},
		{"query", scale, "POST", "/v1/job/web/scale?namespace=dev", `{"Count":1}`, "dev", false, nil},
		{"query and Target agree", scale, "POST", "/v1/job/web/scale?namespace=dev",
			`{"Target":{"Namespace":"dev","Group":"g"}}`, "dev", false, []string{"Target.Namespace"}},
		{"Target alone", scale, "POST", "/v1/job/web/scale", `{"Target":{"Namespace":"prod"}}`, "prod", false,
			[]string{"Target.Namespace"}},
		{"query and Target disagree", scale, "POST", "/v1/job/web/scale?namespace=dev",
			`{"Count":0,"Target":{"Namespace":"prod","Group":"g"}}`, `"dev" in the query's namespace and "prod" in the body's Target.Namespace`, true, nil},
		{"lower-case keys are read as encoding/json reads them", scale, "POST", "/v1/job/web/scale?namespace=dev",
			`{"target":{"namespace":"prod"}}`, `"prod" in the body's target.namespace`, true, nil},
		{"Job.Namespace and the body's Namespace disagree", scale, "POST", "/v1/jobs",
			`{"Namespace":"dev","Job":{"ID":"x","Namespace":"prod"}}`, "two namespaces", true, nil},
		{"a Job without a namespace gets the query's", scale, "POST", "/v1/jobs?namespace=dev",
			`{"Job":{"ID":"x"}}`, "dev", false, []string{"Job.Namespace"}},
		{"repeated query values disagree", scale, "POST", "/v1/job/web/scale?namespace=dev&namespace=prod", `{}`,
			"two namespaces", true, nil},
		{"a write's * is refused", scale, "DELETE", "/v1/job/web?namespace=*", ``, `namespace "*"`, true, nil},
		{"a write's * in the body is refused", scale, "POST", "/v1/jobs", `{"Job":{"Namespace":"*"}}`, `namespace "*"`, true, nil},
		{"a list reads *", list, "GET", "/v1/jobs?namespace=*", ``, "*", false, nil},
		{"search reads * with a body", search, "POST", "/v1/search?namespace=*", `{"Prefix":"w"}`, "*", false, nil},
		{"a route without a namespace need ignores its body", acl, "PUT", "/v1/acl/token", `{"Namespace":"prod"}`, "default", false, nil},
		{"a body that is not an object is left to the handler", scale, "POST", "/v1/job/web/scale?namespace=dev", `[1,2`, "dev", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r = httptest.NewRequest(tc.method, tc.url, strings.NewReader(tc.body))
			got, err := resolveNamespace(r, tc.rt)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), tc.want) || statusFor(err) != 400 {
					t.Fatalf("got %v (status %d), want a 400 saying %q", err, statusFor(err), tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ns := namespaceOf(got); ns != tc.want {
				t.Fatalf("resolved %q, want %q", ns, tc.want)
			}
			if o, _ := parseQuery(got); o.Namespace != tc.want {
				t.Fatalf("parseQuery says %q", o.Namespace)
			}
			if q := got.URL.Query()["namespace"]; len(q) > 0 && (len(q) != 1 || q[0] != tc.want) {
				t.Fatalf("the query still says %v", q)
			}
			b, _ := io.ReadAll(got.Body)
			var doc map[string]any
			if len(tc.wantBody) > 0 {
				if err := json.Unmarshal(b, &doc); err != nil {
					t.Fatalf("rewritten body %s: %v", b, err)
				}
			}
			for _, key := range tc.wantBody {
				obj, field, _ := strings.Cut(key, ".")
				m, _ := doc[obj].(map[string]any)
				if m[field] != tc.want {
					t.Fatalf("body's %s = %v in %s, want %q", key, m[field], b, tc.want)
				}
			}
			if tc.body == `[1,2` && string(b) != tc.body {
				t.Fatalf("a malformed body was changed: %q", b)
			}
		})
	}
}

// The rewrite leaves one Namespace key per object, in its canonical
// spelling, whatever spellings the body used.
func TestRewriteBodyNamespacesDropsOtherSpellings(t *testing.T) {
	r := httptest.NewRequest("POST", "/v1/job/web/scale?namespace=dev",
		strings.NewReader(`{"Target":{"Namespace":"dev","NAMESPACE":"dev","Group":"g"},"namespace":"dev"}`))
	got, err := resolveNamespace(r, route{pattern: "POST /v1/job/{id}/scale", kind: writeRoute, need: nsCap("scale-job")})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(got.Body)
	if want := `{"Namespace":"dev","Target":{"Group":"g","Namespace":"dev"}}`; string(b) != want {
		t.Fatalf("body %s, want %s", b, want)
	}
	if got.ContentLength != int64(len(b)) {
		t.Fatalf("ContentLength %d for %d bytes", got.ContentLength, len(b))
	}
}

// Whatever the query and the body, resolution does not panic, and when it
// resolves, the request the handler gets names no other namespace.
func FuzzResolveNamespace(f *testing.F) {
	f.Add("dev", `{"Target":{"Namespace":"prod"}}`)
	f.Add("*", `{"Job":{"namespace":"dev"},"NAMESPACE":"dev"}`)
	f.Add("", `{"job":{"Namespace":"x"},"Job":{"Namespace":"y"}}`)
	f.Add("a&namespace=b", `[`)
	rt := route{pattern: "POST /v1/jobs", kind: writeRoute, need: nsCap("submit-job")}
	f.Fuzz(func(t *testing.T, query, body string) {
		r := httptest.NewRequest("POST", "/v1/jobs", strings.NewReader(body))
		r.URL.RawQuery = "namespace=" + query
		got, err := resolveNamespace(r, rt)
		if err != nil {
			if statusFor(err) != 400 {
				t.Fatalf("status %d for %v", statusFor(err), err)
			}
			return
		}
		ns := namespaceOf(got)
		if ns == "*" {
			t.Fatal("a write resolved to *")
		}
		for _, v := range got.URL.Query()["namespace"] {
			if v != ns {
				t.Fatalf("the query says %q, resolved %q", v, ns)
			}
		}
		b, _ := io.ReadAll(got.Body)
		var doc map[string]json.RawMessage
		if json.Unmarshal(b, &doc) == nil {
			for _, n := range bodyNamespaces(doc) {
				if n.name != ns {
					t.Fatalf("%s says %q, resolved %q (body %s)", n.where, n.name, ns, b)
				}
			}
		}
	})
}
