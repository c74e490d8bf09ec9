package jobspec

import (
	"strings"
	"unicode"
)

// locator maps the JSON path of every written field ("Job.TaskGroups[0].
// Update.MaxParallel") to where it is written, so that the checks shared by
// job files and API jobs can name and place what they find.
type locator struct {
	api  bool // API form: fields are named by their JSON path
	file string
	at   map[string]loc
	// bad holds the paths whose values were already reported as invalid,
	// so that the shared checks do not report them again.
	bad map[string]bool
}

func newLocator(file string, api bool) *locator {
	return &locator{api: api, file: file, at: map[string]loc{}, bad: map[string]bool{}}
}

func (lc *locator) set(path string, l loc) { lc.at[path] = l }

// has reports whether the field at path was written.
func (lc *locator) has(path string) bool { _, ok := lc.at[path]; return ok }

// get returns where path is written or, when it is not, where its nearest
// written parent is, named after path.
func (lc *locator) get(path string) loc {
	if l, ok := lc.at[path]; ok {
		return l
	}
	if lc.api && lc.file == "" {
		return loc{File: path, Field: path}
	}
	var suffix []string
	p := path
	for p != "" {
		cut := strings.LastIndexAny(p, ".[")
		if cut < 0 {
			break
		}
		seg := p[cut:]
		p = p[:cut]
		if strings.HasPrefix(seg, ".") {
			suffix = append([]string{snake(seg[1:])}, suffix...)
		}
		if l, ok := lc.at[p]; ok {
			if lc.api {
				return l.named(path)
			}
			name := strings.Join(suffix, ".")
			switch {
			case name == "":
				name = l.Field
			case l.Field != "":
				name = l.Field + "." + name
			}
			return l.named(name)
		}
	}
	if lc.api {
		return loc{File: lc.file, Field: path}
	}
	return loc{File: lc.file, Line: 1, Column: 1, Field: snake(path)}
}

// snake turns a JSON field name into the job-file style: MaxParallel →
// max_parallel.
func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fieldErr reports an error about the field at l: "FIELD message" in job
// files, the bare message after the path in API jobs.
func (r *report) fieldErr(lc *locator, l loc, format string, args ...any) {
	r.errorf(l, "%s", phrase(lc, l, format, args...))
}

// fieldWarn is fieldErr for warnings.
func (r *report) fieldWarn(lc *locator, l loc, format string, args ...any) {
	r.warnf(l, "%s", phrase(lc, l, format, args...))
}

func phrase(lc *locator, l loc, format string, args ...any) string {
	msg := sprintf(format, args...)
	if lc.api && l.File == l.Field {
		return strings.TrimPrefix(msg, "is ")
	}
	return l.Field + " " + msg
}
