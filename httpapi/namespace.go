package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/droverhq/drover/structs"
)

// A request's namespace is resolved once, here, before the ACL check, and
// every later reader sees only the resolved value:
//
//   - it is named by the query's namespace (each value, if repeated) and,
//     for a route that needs a namespace or variables capability, by every namespace its
//     JSON body names: the request's own Namespace, Job.Namespace and
//     Target.Namespace, in any spelling encoding/json would read (its keys
//     match without regard to case);
//   - the names must agree: two different ones are a 400 naming both;
//     none is "default";
//   - "*" (every namespace) is accepted only by reads (GET, and the search
//     route, which reads with a body), as in Nomad, where a wildcard never
//     selects the object of a write: any other request naming "*" is a 400.
//
// The request a handler receives is rewritten to say only the resolved
// namespace: the query carries it as its one namespace value when it named
// any (or when the body named a namespace other than the default), and each
// of those body objects carries it as its one Namespace key (a Job always
// does: a job submitted without one lives in the request's namespace). A
// handler therefore cannot act in a namespace other than the one the ACL
// check saw, whichever field it reads; parseQuery and namespaceOf return
// the resolved value.

// wildcardRoutes read with a body, and so may name "*" without a GET.
var wildcardRoutes = map[string]bool{
	"PUT /v1/search":  true,
	"POST /v1/search": true,
}

// maxNamespaceLen bounds a namespace's name, as Nomad's.
const maxNamespaceLen = 128

// namespaceKey carries the resolved namespace in a request's context.
type namespaceKey struct{}

// namespaceIn is one place a request names a namespace.
type namespaceIn struct {
	where, name string
}

// resolveNamespace resolves r's namespace for rt and returns r rewritten
// to carry it (see above), or the 400 to answer with.
func resolveNamespace(r *http.Request, rt route) (*http.Request, error) {
	var named []namespaceIn
	queried := r.URL.Query()["namespace"]
	for _, v := range queried {
		if v != "" {
			named = append(named, namespaceIn{"the query's namespace", v})
		}
	}
	var doc map[string]json.RawMessage
	var body []byte
	if (rt.need.kind == needNamespace || rt.need.kind == needVariables) && r.Body != nil && r.Body != http.NoBody && r.Method != http.MethodGet {
		var err error
		if body, err = readBody(r); err != nil {
			if statusFor(err) == http.StatusRequestEntityTooLarge {
				return nil, Errorf(http.StatusRequestEntityTooLarge, "request body too large: %w", err)
			}
			return nil, Errorf(http.StatusBadRequest, "reading request body: %w", err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		// A body that is not a JSON object is left to its handler, which
		// refuses it with a located error; it names no namespace either.
		if json.Unmarshal(body, &doc) == nil {
			named = append(named, bodyNamespaces(doc)...)
		}
	}
	ns := ""
	var first namespaceIn
	for _, n := range named {
		switch {
		case ns == "":
			ns, first = n.name, n
		case n.name != ns:
			return nil, Errorf(http.StatusBadRequest, "the request names two namespaces: %q in %s and %q in %s",
				first.name, first.where, n.name, n.where)
		}
	}
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	if len(ns) > maxNamespaceLen || !utf8.ValidString(ns) || strings.IndexFunc(ns, unicode.IsControl) >= 0 {
		return nil, Errorf(http.StatusBadRequest, "invalid namespace %q (in %s): a namespace name is at most %d bytes of text without control characters",
			ns, first.where, maxNamespaceLen)
	}
	if ns == "*" && r.Method != http.MethodGet && r.Method != http.MethodHead && !wildcardRoutes[rt.pattern] {
		return nil, Errorf(http.StatusBadRequest, "namespace \"*\" (in %s) selects every namespace, which only a read may do: %s names the namespace it changes",
			first.where, rt.pattern)
	}
	if len(queried) > 0 && !(len(queried) == 1 && queried[0] == ns) || len(queried) == 0 && ns != structs.DefaultNamespace {
		q := r.URL.Query()
		q.Set("namespace", ns)
		r.URL.RawQuery = q.Encode()
	}
	if doc != nil {
		if rewritten, changed := rewriteBodyNamespaces(doc, ns); changed {
			if b, err := json.Marshal(rewritten); err == nil {
				body = b
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
	}
	return r.WithContext(context.WithValue(r.Context(), namespaceKey{}, ns)), nil
}

// The body objects that may name a namespace, as a key of the top-level
// object (matched as encoding/json matches keys: exactly, or else without
// regard to case).
var namespacedObjects = []string{"Job", "Target"}

// bodyNamespaces lists the namespaces a body names, where it names them.
func bodyNamespaces(doc map[string]json.RawMessage) []namespaceIn {
	var out []namespaceIn
	add := func(obj map[string]json.RawMessage, where string) {
		for k, v := range obj {
			if !strings.EqualFold(k, "Namespace") {
				continue
			}
			var s string
			if json.Unmarshal(v, &s) == nil && s != "" {
				out = append(out, namespaceIn{where + k, s})
			}
		}
	}
	add(doc, "the body's ")
	for k, v := range doc {
		for _, name := range namespacedObjects {
			var obj map[string]json.RawMessage
			if strings.EqualFold(k, name) && json.Unmarshal(v, &obj) == nil {
				add(obj, "the body's "+k+".")
			}
		}
	}
	return out
}

// rewriteBodyNamespaces makes every Namespace key of doc (the top level,
// Job, Target) say ns, once, under its canonical name, and gives a Job
// without one the request's. It reports whether anything changed.
func rewriteBodyNamespaces(doc map[string]json.RawMessage, ns string) (map[string]json.RawMessage, bool) {
	quoted, _ := json.Marshal(ns)
	set := func(obj map[string]json.RawMessage, always bool) bool {
		had, deleted := false, false
		for k := range obj {
			if strings.EqualFold(k, "Namespace") {
				had = true
				if k != "Namespace" {
					delete(obj, k)
					deleted = true
				}
			}
		}
		if !had && !always {
			return false
		}
		if bytes.Equal(obj["Namespace"], quoted) {
			return deleted
		}
		obj["Namespace"] = quoted
		return true
	}
	changed := set(doc, false)
	for k, v := range doc {
		for _, name := range namespacedObjects {
			var obj map[string]json.RawMessage
			if !strings.EqualFold(k, name) || json.Unmarshal(v, &obj) != nil || obj == nil {
				continue
			}
			if set(obj, name == "Job") {
				b, err := json.Marshal(obj)
				if err != nil {
					continue
				}
				doc[k] = b
				changed = true
			}
		}
	}
	return doc, changed
}

// namespaceOf is the namespace a request is about, as resolveNamespace
// resolved it; a request that was not resolved (a test calling a handler
// directly) says it in its query, or is about "default".
func namespaceOf(r *http.Request) string {
	if ns, ok := r.Context().Value(namespaceKey{}).(string); ok {
		return ns
	}
	if ns := r.URL.Query().Get("namespace"); ns != "" {
		return ns
	}
	return structs.DefaultNamespace
}
