package jobspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/droverhq/drover/structs"
)

// ParseAPIJob decodes a Nomad API job JSON object (the value of "Job" in
// {"Job": {...}}, as github.com/hashicorp/nomad/api sends it: many fields
// null/empty, pointers in Update) and applies the same defaults, merge and
// validation as Parse. Locations are JSON paths like
// "Job.TaskGroups[0].Update.MaxParallel". Fields Nomad defines but drover
// does not support are accepted when null/empty/zero and refused when set;
// fields nobody defines are refused, naming them. The wrapped form
// {"Job": {...}} is accepted too.
func ParseAPIJob(data []byte) (*structs.Job, []Diagnostic, error) {
	return parseJSON("", data)
}

func parseJSONFile(filename string, src []byte) (*structs.Job, []Diagnostic, error) {
	return parseJSON(filename, src)
}

// jsonWalker checks an API job's JSON tree against drover's spec types
// (the elements drover supports) and the grammar table (every element
// Nomad defines), recording every field's place.
type jsonWalker struct {
	lc    *locator
	r     *report
	lines lines
}

func parseJSON(filename string, src []byte) (*structs.Job, []Diagnostic, error) {
	r := &report{}
	lc := newLocator(filename, true)
	w := &jsonWalker{lc: lc, r: r, lines: newLines(src)}
	tree, off, err := parseTree(src)
	if err != nil {
		l := w.at(off, "Job")
		r.errorf(l, "%v", err)
		warns, e := r.result()
		return nil, warns, e
	}
	if tree.kind == 'o' && len(tree.keys) == 1 && tree.keys[0] == "Job" {
		tree = tree.kids["Job"]
	}
	if tree.kind != 'o' {
		r.errorf(w.at(tree.off, "Job"), "%s", phrase(lc, w.at(tree.off, "Job"), "must be an object (got %s)", kindName(tree.kind)))
		warns, e := r.result()
		return nil, warns, e
	}
	w.walk(tree, reflect.TypeFor[specJob](), "Job")
	if len(r.errs) > 0 {
		warns, e := r.result()
		return nil, warns, e
	}
	// Only supported fields have a place in specJob: the decoder drops the
	// others, which the walk has already judged.
	var aj specJob
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var target any = &aj
	if isWrapped(src) {
		target = &struct{ Job *specJob }{Job: &aj}
	}
	if err := dec.Decode(target); err != nil {
		r.errorf(w.at(0, "Job"), "%s", phrase(lc, w.at(0, "Job"), "cannot be decoded: %v", err))
		warns, e := r.result()
		return nil, warns, e
	}
	normalizeConfig(&aj)
	j := finish(&aj, lc, r)
	warns, e := r.result()
	if e != nil {
		return nil, warns, e
	}
	return j, warns, nil
}

func isWrapped(src []byte) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(src, &probe) != nil || len(probe) != 1 {
		return false
	}
	_, ok := probe["Job"]
	return ok
}

// at returns the loc of a value at offset off named path.
func (w *jsonWalker) at(off int, path string) loc {
	if w.lc.file == "" {
		return loc{File: path, Field: path}
	}
	line, col := w.lines.pos(off)
	return loc{File: w.lc.file, Line: line, Column: col, Field: path}
}

// jsonName is the name encoding/json uses for a struct field.
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name
	}
	return f.Name
}

func lookupJSON(blockName, name string) (element, bool) {
	for _, e := range grammar[blockName] {
		if e.JSON == name && name != "" {
			return e, true
		}
	}
	return element{}, false
}

// walk checks an object against spec type t. Each key is looked up in the
// grammar table, exactly or else ignoring case as encoding/json does: a
// name Nomad does not define is an error with a suggestion; an element
// drover does not support is judged by its value (zero, null or Nomad's
// default passes; set, it is refused or ignored as the table says); a
// supported one is checked against its field of t.
func (w *jsonWalker) walk(n *jnode, t reflect.Type, path string) {
	w.lc.set(path, w.at(n.off, path))
	blockName := blockOf[t]
	for _, written := range n.keys {
		v, key := n.kids[written], written
		e, ok := lookupJSON(blockName, key)
		if !ok {
			for _, ge := range grammar[blockName] {
				if ge.JSON != "" && strings.EqualFold(ge.JSON, key) {
					e, ok, key = ge, true, ge.JSON
					break
				}
			}
		}
		fpath := path + "." + key
		l := w.at(n.keyOff[written], fpath)
		if !ok {
			owner := "a Nomad " + blockName
			if droverBlocks[blockName] {
				owner = "drover's " + blockName + " block"
			}
			w.r.fieldErr(w.lc, l, "is not a field of %s%s", owner, suggest(key, jsonNames(blockName)))
			continue
		}
		f, decoded := specField(t, key)
		if e.Support == supported && !decoded {
			e = element{JSON: key, Support: refused, Note: "not part of drover's job grammar"}
		}
		if v.kind == 's' && isNomadDefault(blockName, e, v.str) {
			continue
		}
		switch e.Support {
		case serverSet:
			continue
		case refused:
			if !v.zero() {
				w.r.fieldErr(w.lc, l, "is not supported by drover (%s)", e.Note)
			}
			continue
		case ignored:
			if !v.zero() {
				w.r.fieldWarn(w.lc, l, "is not supported by drover and is ignored (%s)", e.Note)
			}
			continue
		}
		w.lc.set(fpath, w.at(v.off, fpath))
		w.value(v, f.Type, fpath)
	}
}

// jsonNames lists the JSON names of a block's elements, for suggestions.
func jsonNames(blockName string) []string {
	var out []string
	for _, e := range grammar[blockName] {
		if e.JSON != "" {
			out = append(out, e.JSON)
		}
	}
	return out
}

// specField returns the field of spec type t named name in JSON.
func specField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && jsonName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// value checks that n fits type t, descending into supported structs.
func (w *jsonWalker) value(n *jnode, t reflect.Type, path string) {
	if t == reflect.TypeFor[structs.Amount]() {
		// An element of a list of amounts, where null means nothing.
		w.amount(n, path, w.at(n.off, path))
		return
	}
	if n.kind == 'z' {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	l := w.at(n.off, path)
	if t == reflect.TypeFor[structs.Amount]() {
		w.amount(n, path, l)
		return
	}
	want := func(k byte) bool {
		if n.kind != k {
			w.r.fieldErr(w.lc, l, "must be %s (got %s)", kindName(k), kindName(n.kind))
			return false
		}
		return true
	}
	switch t.Kind() {
	case reflect.String:
		want('s')
	case reflect.Bool:
		want('b')
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !want('n') {
			return
		}
		if _, err := n.num.Int64(); err != nil {
			w.r.fieldErr(w.lc, l, "must be a whole number (got %s)", n.num)
			return
		}
		probe := reflect.New(t)
		if err := json.Unmarshal([]byte(n.num), probe.Interface()); err != nil {
			w.r.fieldErr(w.lc, l, "is out of range (got %s)", n.num)
		}
	case reflect.Float32, reflect.Float64:
		want('n')
	case reflect.Slice:
		if !want('a') {
			return
		}
		for i, e := range n.elems {
			// Each element's place, so that a check can point at one
			// (GroupOrder[2] names a group twice).
			ep := fmt.Sprintf("%s[%d]", path, i)
			w.lc.set(ep, w.at(e.off, ep))
			w.value(e, t.Elem(), ep)
		}
	case reflect.Map:
		if !want('o') {
			return
		}
		for _, k := range n.keys {
			if t.Elem().Kind() == reflect.Interface {
				// Free-form data (a driver's config): where each key is
				// written, for the driver's checks.
				w.record(n.kids[k], path+"."+k)
			}
			w.value(n.kids[k], t.Elem(), path+"."+k)
		}
	case reflect.Struct:
		if !want('o') {
			return
		}
		if _, ok := blockOf[t]; ok {
			w.walk(n, t, path)
		}
	case reflect.Interface:
	}
}

// record records where n and everything inside it is written.
func (w *jsonWalker) record(n *jnode, path string) {
	w.lc.set(path, w.at(n.off, path))
	for i, e := range n.elems {
		w.record(e, fmt.Sprintf("%s[%d]", path, i))
	}
	for _, k := range n.keys {
		w.record(n.kids[k], path+"."+k)
	}
}

// amount checks a count or a percentage (structs.Amount): a whole number,
// or a string "N%" or "N". Its place is recorded, so that the checks of
// the merged strategy can point at one element of a list (Checkpoints[1]).
func (w *jsonWalker) amount(n *jnode, path string, l loc) {
	w.lc.set(path, l)
	switch n.kind {
	case 'n':
		i, err := n.num.Int64()
		if err != nil {
			w.r.fieldErr(w.lc, l, "%v (got %s)", structs.ErrAmount, n.num)
		} else if i > 1<<31-1 || i < -(1<<31) {
			w.r.fieldErr(w.lc, l, "is out of range (got %s)", n.num)
		}
	case 's':
		a, err := structs.ParseAmount(n.str)
		if err != nil || a.Value > 1<<31-1 || a.Value < -(1<<31) {
			w.r.fieldErr(w.lc, l, "%v (got %q)", structs.ErrAmount, n.str)
		}
	default:
		w.r.fieldErr(w.lc, l, "%v (got %s)", structs.ErrAmount, kindName(n.kind))
	}
}

// normalizeConfig turns json.Number values in driver configs into int64
// or float64, as job files produce them.
func normalizeConfig(aj *specJob) {
	for _, tg := range aj.TaskGroups {
		if tg == nil {
			continue
		}
		if tg.Scaling != nil && tg.Scaling.Policy != nil {
			tg.Scaling.Policy = normalizeAny(tg.Scaling.Policy).(map[string]any)
		}
		for _, t := range tg.Tasks {
			if t != nil && t.Config != nil {
				t.Config = normalizeAny(t.Config).(map[string]any)
			}
		}
	}
}

// normalizeAny turns the json.Numbers in a config decoded with UseNumber
// into int64 or float64, in place.
func normalizeAny(v any) any {
	return structs.MapConfigLeaves(v, func(v any) any {
		n, ok := v.(json.Number)
		if !ok {
			return v
		}
		if i, err := n.Int64(); err == nil {
			return i
		}
		f, _ := n.Float64()
		return f
	})
}
