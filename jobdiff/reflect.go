package jobdiff

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// objectNames are the names Nomad gives the items of a list of blocks; any
// other list is named by its field.
var objectNames = map[string]string{
	"Constraints":   "Constraint",
	"Affinities":    "Affinity",
	"Spreads":       "Spread",
	"Services":      "Service",
	"Checks":        "Check",
	"Networks":      "Network",
	"DynamicPorts":  "Dynamic Port",
	"ReservedPorts": "Static Port",
	"Targets":       "SpreadTarget",
	"Checkpoints":   "Checkpoints",
	"Templates":     "Template",
	"Analyses":      "Analysis",
}

// keyFields pair the items of two lists of blocks: items with the same key
// are one item changed, not one deleted and one added. A task's templates
// pair by destination (one file per destination).
var keyFields = []string{"Name", "Label", "DestPath"}

var durationType = reflect.TypeOf(time.Duration(0))

// valueOf returns the struct a pointer points to, or an invalid Value for
// nil.
func valueOf[T any](p *T) reflect.Value {
	if p == nil {
		return reflect.Value{}
	}
	return reflect.ValueOf(p).Elem()
}

// compare diffs two values of one struct type (either may be invalid:
// missing) into its field diffs and object diffs, leaving out skip.
func compare(a, b reflect.Value, skip map[string]bool, contextual bool) ([]*FieldDiff, []*ObjectDiff) {
	t := typeOf(a, b)
	if t == nil {
		return nil, nil
	}
	oldFlat, newFlat := map[string]string{}, map[string]string{}
	var objects []*ObjectDiff
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, ok := fieldName(f)
		if !ok || skip[f.Name] {
			continue
		}
		fa, fb := field(a, i), field(b, i)
		if primitive(f.Type) || primitiveMap(f.Type) {
			flattenInto(oldFlat, name, fa)
			flattenInto(newFlat, name, fb)
			continue
		}
		objects = append(objects, objectsOf(name, f.Type, fa, fb, contextual)...)
	}
	sort.SliceStable(objects, func(i, j int) bool { return objects[i].Name < objects[j].Name })
	return fieldDiffs(oldFlat, newFlat, contextual), objects
}

// objectsOf diffs one non-primitive field: a block, a list of blocks, a list
// of values (a set, as Nomad's Datacenters or Tags) or a free-form map (a
// driver's config).
func objectsOf(name string, t reflect.Type, a, b reflect.Value, contextual bool) []*ObjectDiff {
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	switch {
	case base.Kind() == reflect.Struct:
		if o := object(name, deref(a), deref(b), contextual); o != nil {
			return []*ObjectDiff{o}
		}
	case base.Kind() == reflect.Slice && primitive(base.Elem()):
		if o := valueSet(name, a, b); o != nil {
			return []*ObjectDiff{o}
		}
	case base.Kind() == reflect.Slice:
		return blockList(singular(name), a, b, contextual)
	default: // maps of blocks or of free-form values
		if o := flatObject(name, a, b, contextual); o != nil {
			return []*ObjectDiff{o}
		}
	}
	return nil
}

// object diffs one block; nil when both are missing, or when it is
// unchanged and not contextual.
func object(name string, a, b reflect.Value, contextual bool) *ObjectDiff {
	if !a.IsValid() && !b.IsValid() {
		return nil
	}
	o := &ObjectDiff{Name: name}
	o.Fields, o.Objects = compare(a, b, nil, contextual || !a.IsValid() || !b.IsValid())
	o.Type = levelType(!a.IsValid(), !b.IsValid(), o.Fields, o.Objects, nil)
	if o.Type == TypeNone {
		return nil
	}
	if !contextual {
		o.Fields = changedOnly(o.Fields)
	}
	return o
}

// blockList diffs two lists of blocks. Items equal on both sides are
// unchanged; items with the same Name (or Label) are one item edited; the
// rest are deleted or added.
func blockList(name string, a, b reflect.Value, contextual bool) []*ObjectDiff {
	olds, news := items(a), items(b)
	var out []*ObjectDiff
	used := make([]bool, len(news))
	var pendingOld []reflect.Value
	for _, x := range olds {
		matched := false
		for j, y := range news {
			if !used[j] && sameJSON(x, y) {
				used[j], matched = true, true
				break
			}
		}
		if !matched {
			pendingOld = append(pendingOld, x)
		}
	}
	for _, x := range pendingOld {
		k := key(x)
		pair := -1
		if k != "" {
			for j, y := range news {
				if !used[j] && key(y) == k {
					pair = j
					break
				}
			}
		}
		if pair >= 0 {
			used[pair] = true
			if o := object(name, x, news[pair], contextual); o != nil {
				out = append(out, o)
			}
			continue
		}
		if o := object(name, x, reflect.Value{}, contextual); o != nil {
			out = append(out, o)
		}
	}
	for j, y := range news {
		if !used[j] {
			if o := object(name, reflect.Value{}, y, contextual); o != nil {
				out = append(out, o)
			}
		}
	}
	return out
}

// valueSet diffs two lists of plain values as sets, as Nomad diffs
// Datacenters and Tags: each value added or removed is a field named after
// the list.
func valueSet(name string, a, b reflect.Value) *ObjectDiff {
	olds, news := map[string]bool{}, map[string]bool{}
	for _, v := range items(a) {
		olds[format(v)] = true
	}
	for _, v := range items(b) {
		news[format(v)] = true
	}
	o := &ObjectDiff{Name: name}
	for v := range olds {
		if !news[v] {
			o.Fields = append(o.Fields, &FieldDiff{Type: TypeDeleted, Name: name, Old: v})
		}
	}
	for v := range news {
		if !olds[v] {
			o.Fields = append(o.Fields, &FieldDiff{Type: TypeAdded, Name: name, New: v})
		}
	}
	if len(o.Fields) == 0 {
		return nil
	}
	sort.Slice(o.Fields, func(i, j int) bool {
		x, y := o.Fields[i], o.Fields[j]
		return x.Old+x.New < y.Old+y.New
	})
	switch {
	case len(olds) == 0:
		o.Type = TypeAdded
	case len(news) == 0:
		o.Type = TypeDeleted
	default:
		o.Type = TypeEdited
	}
	return o
}

// flatObject diffs a free-form map (a driver's config) by its flattened
// keys: "command", "args[0]", "port_map[0].http".
func flatObject(name string, a, b reflect.Value, contextual bool) *ObjectDiff {
	oldFlat, newFlat := map[string]string{}, map[string]string{}
	flattenAny(oldFlat, "", plain(a))
	flattenAny(newFlat, "", plain(b))
	if len(oldFlat) == 0 && len(newFlat) == 0 {
		return nil
	}
	o := &ObjectDiff{Name: name, Fields: fieldDiffs(oldFlat, newFlat, true)}
	o.Type = levelType(len(oldFlat) == 0, len(newFlat) == 0, o.Fields, nil, nil)
	if o.Type == TypeNone {
		return nil
	}
	if !contextual {
		o.Fields = changedOnly(o.Fields)
	}
	return o
}

// fieldDiffs compares two flattened levels, sorted by name. Unchanged
// fields are kept only when contextual.
func fieldDiffs(olds, news map[string]string, contextual bool) []*FieldDiff {
	names := map[string]bool{}
	for k := range olds {
		names[k] = true
	}
	for k := range news {
		names[k] = true
	}
	var out []*FieldDiff
	for k := range names {
		o, n := olds[k], news[k]
		d := &FieldDiff{Name: k, Old: o, New: n}
		switch {
		case o == n:
			if !contextual || o == "" {
				continue
			}
			d.Type = TypeNone
		case o == "":
			d.Type = TypeAdded
		case n == "":
			d.Type = TypeDeleted
		default:
			d.Type = TypeEdited
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func changedOnly(fields []*FieldDiff) []*FieldDiff {
	out := fields[:0:0]
	for _, f := range fields {
		if f.Type != TypeNone {
			out = append(out, f)
		}
	}
	return out
}

// flattenInto writes a primitive field (or a map of them, as Meta[key]).
func flattenInto(out map[string]string, name string, v reflect.Value) {
	v = deref(v)
	if !v.IsValid() {
		return
	}
	if v.Kind() == reflect.Map {
		for _, k := range v.MapKeys() {
			out[fmt.Sprintf("%s[%s]", name, format(k))] = format(v.MapIndex(k))
		}
		return
	}
	out[name] = format(v)
}

// flattenAny flattens plain data (maps, lists, scalars) into dotted keys.
func flattenAny(out map[string]string, prefix string, v any) {
	switch x := v.(type) {
	case nil:
	case map[string]any:
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flattenAny(out, p, e)
		}
	case []any:
		for i, e := range x {
			flattenAny(out, fmt.Sprintf("%s[%d]", prefix, i), e)
		}
	case string:
		out[prefix] = x
	case float64:
		out[prefix] = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		out[prefix] = fmt.Sprint(x)
	}
}

// plain turns any value into JSON-like data, so that maps of blocks and
// driver configs (whose numbers may be ints or floats) flatten alike.
func plain(v reflect.Value) any {
	v = deref(v)
	if !v.IsValid() {
		return nil
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Sprint(v.Interface())
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// format writes a primitive as Nomad's flattened form does.
func format(v reflect.Value) string {
	v = deref(v)
	if !v.IsValid() {
		return ""
	}
	if v.Type() == durationType {
		return strconv.FormatInt(v.Int(), 10)
	}
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		b, err := m.MarshalText()
		if err == nil {
			return string(b)
		}
	}
	if m, ok := v.Interface().(json.Marshaler); ok {
		b, err := m.MarshalJSON()
		if err == nil {
			return strings.Trim(string(b), `"`)
		}
	}
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'f', -1, 64)
	}
	return fmt.Sprint(v.Interface())
}

// primitive reports whether a field of type t is written as one value: a
// scalar, a pointer to one, or a struct that marshals itself (an Amount).
func primitive(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) && t.Kind() == reflect.Struct {
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

// primitiveMap reports whether t is a map of scalars (Meta, Env).
func primitiveMap(t reflect.Type) bool {
	return t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && primitive(t.Elem()) &&
		t.Elem().Kind() != reflect.Interface
}

// fieldName is the field's name in a diff (its JSON name), and whether it
// takes part at all (exported, not hidden from JSON).
func fieldName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	if n := strings.Split(tag, ",")[0]; n != "" {
		return n, true
	}
	return f.Name, true
}

func singular(name string) string {
	if s, ok := objectNames[name]; ok {
		return s
	}
	return name
}

func typeOf(a, b reflect.Value) reflect.Type {
	switch {
	case a.IsValid():
		return a.Type()
	case b.IsValid():
		return b.Type()
	}
	return nil
}

func field(v reflect.Value, i int) reflect.Value {
	if !v.IsValid() {
		return reflect.Value{}
	}
	return v.Field(i)
}

// deref follows pointers and interfaces; nil gives an invalid Value.
func deref(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

func items(v reflect.Value) []reflect.Value {
	v = deref(v)
	if !v.IsValid() || v.Kind() != reflect.Slice {
		return nil
	}
	out := make([]reflect.Value, 0, v.Len())
	for i := 0; i < v.Len(); i++ {
		if e := deref(v.Index(i)); e.IsValid() {
			out = append(out, e)
		}
	}
	return out
}

func key(v reflect.Value) string {
	if v.Kind() != reflect.Struct {
		return ""
	}
	for _, k := range keyFields {
		if f := v.FieldByName(k); f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
			return f.String()
		}
	}
	return ""
}

func sameJSON(a, b reflect.Value) bool {
	x, err1 := json.Marshal(a.Interface())
	y, err2 := json.Marshal(b.Interface())
	return err1 == nil && err2 == nil && string(x) == string(y)
}
