package fsm

import (
	"flag"
	"hash/fnv"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/droverhq/drover/structs"
)

var updateCodec = flag.Bool("update-codec", false, "rewrite testdata/codec with this build's encoder")

// codecSamples names one value of every request a log entry carries and of
// every object a snapshot holds.
func codecSamples() map[string]func() any {
	return map[string]func() any{
		"NodeRegister":                 func() any { return &structs.NodeRegisterRequest{} },
		"NodeUpdateStatus":             func() any { return &structs.NodeUpdateStatusRequest{} },
		"JobRegister":                  func() any { return &structs.JobRegisterRequest{} },
		"JobDeregister":                func() any { return &structs.JobDeregisterRequest{} },
		"EvalUpdate":                   func() any { return &structs.EvalUpdateRequest{} },
		"ApplyPlanResults":             func() any { return &structs.ApplyPlanResultsRequest{} },
		"AllocClientUpdate":            func() any { return &structs.AllocClientUpdateRequest{} },
		"DeploymentStatusUpdate":       func() any { return &structs.DeploymentStatusUpdateRequest{} },
		"DeploymentPromote":            func() any { return &structs.DeploymentPromoteRequest{} },
		"DeploymentAllocHealth":        func() any { return &structs.DeploymentAllocHealthRequest{} },
		"JobStability":                 func() any { return &structs.JobStabilityRequest{} },
		"AllocUpdateDesiredTransition": func() any { return &structs.AllocUpdateDesiredTransitionRequest{} },
		"NodeDeregister":               func() any { return &structs.NodeDeregisterRequest{} },
		"EvalReap":                     func() any { return &structs.EvalReapRequest{} },
		"AutopilotSetConfig":           func() any { return &structs.AutopilotSetConfigRequest{} },
		"ACLTokenBootstrap":            func() any { return &structs.ACLTokenBootstrapRequest{} },
		"ACLPolicyUpsert":              func() any { return &structs.ACLPolicyUpsertRequest{} },
		"ACLPolicyDelete":              func() any { return &structs.ACLPolicyDeleteRequest{} },
		"ACLTokenUpsert":               func() any { return &structs.ACLTokenUpsertRequest{} },
		"ACLTokenDelete":               func() any { return &structs.ACLTokenDeleteRequest{} },
		"ScalingEvent":                 func() any { return &structs.ScalingEventRequest{} },
		"NodeUpdateDrain":              func() any { return &structs.NodeUpdateDrainRequest{} },
		"NodeUpdateEligibility":        func() any { return &structs.NodeUpdateEligibilityRequest{} },
		"Allocation":                   func() any { return &structs.Allocation{} },
		"Job":                          func() any { return &structs.Job{} },
		"Node":                         func() any { return &structs.Node{} },
		"Evaluation":                   func() any { return &structs.Evaluation{} },
		"Deployment":                   func() any { return &structs.Deployment{} },
	}
}

// encodeEntry encodes v with the log's handle.
func encodeEntry(t *testing.T, v any) []byte {
	t.Helper()
	var b []byte
	if err := codec.NewEncoderBytes(&b, msgpackHandle).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeTree decodes an encoding into maps, slices and values.
func decodeTree(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := codec.NewDecoderBytes(b, msgpackHandle).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// holds reports whether encoding b holds every key and value of encoding
// a, in whatever order; b may hold more: a field added since a was
// written.
func holds(t *testing.T, a, b []byte) bool {
	t.Helper()
	return treeHolds(decodeTree(t, a), decodeTree(t, b))
}

func treeHolds(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		return ok && mapHolds(av, bv)
	case map[any]any:
		bv, ok := b.(map[any]any)
		return ok && mapHolds(av, bv)
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !treeHolds(av[i], bv[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// mapHolds reports whether b has every key of a, each holding a's value.
func mapHolds[K comparable](a, b map[K]any) bool {
	for k, x := range a {
		y, ok := b[k]
		if !ok || !treeHolds(x, y) {
			return false
		}
	}
	return true
}

// TestCodecWireFormatIsStable pins the content of every log entry and
// snapshot object, each filled in every field, to files written by an
// earlier build, so that a server reads the log and snapshots an older one
// wrote (and an older one, in a rolling upgrade, reads a newer one's): this
// build writes every key and value a file holds, and decoding a file then
// encoding it again keeps them all (a field the decoder dropped would be
// missing the second time). A field added since is allowed; one removed or
// renamed fails, as old entries would lose it (rewrite the files with
// -update-codec once that is intended). Maps and slices are compared as
// content, in any order of keys: the codec's reflection writes a struct's
// fields sorted by name, a generated codec would write them in declaration
// order, and every decoder finds fields by name.
func TestCodecWireFormatIsStable(t *testing.T) {
	names := make([]string, 0)
	samples := codecSamples()
	for name := range samples {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			v := samples[name]()
			fillValue(reflect.ValueOf(v).Elem(), name, 0)
			got := encodeEntry(t, v)
			path := filepath.Join("testdata", "codec", name+".msgpack")
			if *updateCodec {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !holds(t, want, got) {
				t.Fatalf("%s no longer encodes all that %s holds: the wire format changed", name, path)
			}
			back := samples[name]()
			if err := codec.NewDecoderBytes(want, msgpackHandle).Decode(back); err != nil {
				t.Fatalf("decoding %s: %v", path, err)
			}
			if again := encodeEntry(t, back); !holds(t, want, again) {
				t.Fatalf("%s decoded and encoded again differs from the file: a field was lost", path)
			}
		})
	}
}

var timeType = reflect.TypeOf(time.Time{})

// fillValue sets every field the codec writes to a value derived from its
// path in the value, so that adding a field changes no other field's value:
// pointers and slices get one or two elements, free-form values (any) a
// string, a map one key. Fields the codec skips stay zero.
func fillValue(v reflect.Value, path string, depth int) {
	h := fnv.New64a()
	h.Write([]byte(path))
	n := int64(h.Sum64() >> 1)
	switch v.Kind() {
	case reflect.Pointer:
		if depth > 8 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fillValue(v.Elem(), path+"*", depth+1)
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(time.Unix(1_700_000_000+n%1e6, n%1e9).UTC()))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("codec") == "-" || f.Tag.Get("codec") == "" && f.Tag.Get("json") == "-" {
				continue
			}
			if fv := v.Field(i); f.Anonymous && fv.Kind() == reflect.Pointer {
				// The codec inlines an embedded struct's fields; those of
				// one embedded by pointer (TaskEventExtra) were the outer
				// struct's own before, and are filled as such.
				fv.Set(reflect.New(fv.Type().Elem()))
				fillValue(fv.Elem(), path, depth)
				continue
			}
			fillValue(v.Field(i), path+"."+f.Name, depth+1)
		}
	case reflect.Slice:
		if depth > 8 {
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte("b" + strconv.FormatInt(n%1000, 10)))
			return
		}
		l := 1 + int(n%2)
		s := reflect.MakeSlice(v.Type(), l, l)
		for i := range l {
			fillValue(s.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if depth > 8 {
			return
		}
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fillValue(k, path+"{key}", depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fillValue(e, path+"{value}", depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Interface:
		if v.NumMethod() == 0 {
			v.Set(reflect.ValueOf("any" + strconv.FormatInt(n%1000, 10)))
		}
	case reflect.String:
		v.SetString("s" + strconv.FormatInt(n%100000, 10))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1 + n%100)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1 + uint64(n%100))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(1+n%100) / 4)
	}
}

// TestOmittedFieldsDecodeAsBefore guards the fields the log leaves out
// when empty (`codec:",omitempty"`): a decoder fills a fresh value, so an
// omitted string, number, bool, pointer or struct decodes as the zero
// value it was. An empty slice or map would come back nil instead (and
// its JSON null instead of [] or {}), so no slice or map field may be
// left out.
func TestOmittedFieldsDecodeAsBefore(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(rt reflect.Type, path string)
	walk = func(rt reflect.Type, path string) {
		switch rt.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(rt.Elem(), path)
			return
		case reflect.Map:
			walk(rt.Key(), path)
			walk(rt.Elem(), path)
			return
		case reflect.Struct:
		default:
			return
		}
		if seen[rt] {
			return
		}
		seen[rt] = true
		for i := 0; i < rt.NumField(); i++ {
			f := rt.Field(i)
			if !f.IsExported() {
				continue
			}
			if tag := f.Tag.Get("codec"); strings.Contains(tag, ",omitempty") {
				if k := f.Type.Kind(); k == reflect.Slice || k == reflect.Map {
					t.Errorf("%s.%s: a %s must not be omitted when empty (it would decode as nil)", rt.Name(), f.Name, k)
				}
			}
			walk(f.Type, path+"."+f.Name)
		}
	}
	for name, sample := range codecSamples() {
		walk(reflect.TypeOf(sample()), name)
	}

	// An allocation as a client reports it: most fields zero, the maps
	// and slices empty but present.
	in := &structs.Allocation{
		ID:         "a",
		TaskStates: map[string]*structs.TaskState{"web": {State: structs.TaskStatePending, Events: []*structs.TaskEvent{}}},
		AllocatedResources: &structs.AllocatedResources{
			Tasks:  map[string]*structs.AllocatedTaskResources{},
			Shared: structs.AllocatedSharedResources{Ports: []structs.PortMapping{}},
		},
		DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: new(bool)},
	}
	out := &structs.Allocation{}
	if err := codec.NewDecoderBytes(encodeEntry(t, in), msgpackHandle).Decode(out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("decoded %+v, want %+v", out, in)
	}
}
