package wire

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/droverhq/drover/structs"
)

// The structs package's types encode and decode through the code
// go-msgpack's codecgen generated for them (structs/codec_generated.go,
// scripts/gen-structs-codec.sh). TestGeneratedCodecMatchesReflection holds
// that code to the encoding the codec gives the same fields by reflection:
// for every struct type reachable from the types the servers' log,
// snapshots and the clients' protocol carry, random values must encode to
// the same MessagePack either way (compared decoded, as maps come in any
// order), and what reflection encoded must decode through the generated
// code to a value that encodes as reflection's decoding of it does. A field added to a type
// without regenerating the file is missing from the generated encoding,
// and fails it.

// codecRoots are the types written to the log, snapshots and the wire.
var codecRoots = []any{
	&structs.Allocation{}, &structs.Job{}, &structs.Node{}, &structs.Evaluation{}, &structs.Deployment{},
	&structs.NodeRegisterRequest{}, &structs.NodeUpdateStatusRequest{}, &structs.JobRegisterRequest{},
	&structs.JobDeregisterRequest{}, &structs.EvalUpdateRequest{}, &structs.ApplyPlanResultsRequest{},
	&structs.AllocClientUpdateRequest{}, &structs.DeploymentStatusUpdateRequest{},
	&structs.DeploymentPromoteRequest{}, &structs.DeploymentAllocHealthRequest{}, &structs.JobStabilityRequest{},
	&structs.NodeDeregisterRequest{}, &structs.EvalReapRequest{}, &structs.JobSummary{}, &structs.ACLToken{},
	&structs.ACLPolicy{}, &structs.ACLRole{}, &structs.ACLAuthMethod{}, &structs.ACLBindingRule{},
	&structs.Variable{}, &structs.VariableEncrypted{}, &structs.RootKey{}, &structs.ServiceRegistration{},
	&structs.Namespace{}, &structs.NodePool{}, &structs.JobSubmission{}, &structs.SchedulerConfiguration{},
	&structs.AutopilotConfig{}, &structs.PeriodicLaunch{}, &structs.JobScalingEvents{}, &structs.VariableLock{},
	&structs.OneTimeToken{}, &structs.AllocStopUpdate{}, &structs.JobRegisterAtVersionRequest{},
}

var structsPkg = reflect.TypeOf(structs.Allocation{}).PkgPath()

// reachable returns the struct types of package structs reachable from
// roots' fields, each once.
func reachable(roots []any) []reflect.Type {
	seen := map[reflect.Type]bool{}
	var out []reflect.Type
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(t.Elem())
		case reflect.Map:
			walk(t.Key())
			walk(t.Elem())
		case reflect.Struct:
			if seen[t] {
				return
			}
			seen[t] = true
			if t.PkgPath() == structsPkg {
				out = append(out, t)
			}
			for i := range t.NumField() {
				if t.Field(i).IsExported() {
					walk(t.Field(i).Type)
				}
			}
		}
	}
	for _, r := range roots {
		walk(reflect.TypeOf(r).Elem())
	}
	return out
}

// fill sets v to a random value: some fields left zero (omitempty),
// strings, numbers, times, slices and maps of a few entries.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	if !v.CanSet() || depth > 5 || r.IntN(4) == 0 {
		return
	}
	if v.Type() == reflect.TypeOf(time.Time{}) {
		v.Set(reflect.ValueOf(time.Unix(r.Int64N(4e9), r.Int64N(1e9)).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(r.Int64N(200) - 50)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(r.Uint64N(200))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(r.IntN(1000)) / 8)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", r.IntN(100)))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(r, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		n := r.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(r, v.Index(i), depth+1)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range r.IntN(3) {
			k := reflect.New(v.Type().Key()).Elem()
			fill(r, k, 0)
			e := reflect.New(v.Type().Elem()).Elem()
			fill(r, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		if v.NumMethod() == 0 {
			v.Set(reflect.ValueOf(fmt.Sprintf("i%d", r.IntN(100))))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i), depth+1)
			}
		}
	}
}

// twin returns a struct type with t's exported fields and no methods of
// its own, so that the codec encodes it by reflection; false when t embeds
// a type
// that reflect cannot build a struct with.
func twin(t reflect.Type) (tw reflect.Type, ok bool) {
	var fields []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		ft := f.Type
		if f.Anonymous {
			// An embedded struct, or pointer to one, is embedded as its
			// own twin: the codec flattens its fields either way.
			inner := ft
			if inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			if inner.Kind() != reflect.Struct {
				return nil, false
			}
			itw, ok := twin(inner)
			if !ok {
				return nil, false
			}
			ft = itw
			if f.Type.Kind() == reflect.Pointer {
				ft = reflect.PointerTo(itw)
			}
		}
		fields = append(fields, reflect.StructField{Name: f.Name, Type: ft, Tag: f.Tag, Anonymous: f.Anonymous})
	}
	defer func() {
		if recover() != nil {
			tw, ok = nil, false // an embedded type reflect cannot build a twin with
		}
	}()
	return reflect.StructOf(fields), true
}

// copyFields copies src's fields into its twin dst (or back), embedded
// twins field by field.
func copyFields(dst, src reflect.Value) {
	for k := range dst.NumField() {
		df, sf := dst.Field(k), src.FieldByName(dst.Type().Field(k).Name)
		switch {
		case df.Type() == sf.Type():
			df.Set(sf)
		case df.Kind() == reflect.Pointer:
			if !sf.IsNil() {
				df.Set(reflect.New(df.Type().Elem()))
				copyFields(df.Elem(), sf.Elem())
			}
		default:
			copyFields(df, sf)
		}
	}
}

// generic decodes b into plain values (maps, slices, numbers, strings).
func generic(t *testing.T, b []byte) any {
	t.Helper()
	var out any
	h := &codec.MsgpackHandle{}
	h.RawToString = true
	h.WriteExt = true
	h.MapType = reflect.TypeOf(map[string]any(nil))
	if err := codec.NewDecoderBytes(b, h).Decode(&out); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	return out
}

func TestGeneratedCodecMatchesReflection(t *testing.T) {
	type selfer interface{ CodecEncodeSelf(*codec.Encoder) }
	r := rand.New(rand.NewPCG(5, 8))
	checked, skipped := 0, []string{}
	for _, typ := range reachable(codecRoots) {
		if _, ok := reflect.New(typ).Interface().(selfer); !ok {
			t.Errorf("%s has no generated encoder: run scripts/gen-structs-codec.sh (make generate)", typ.Name())
			continue
		}
		tw, ok := twin(typ)
		if !ok {
			skipped = append(skipped, typ.Name())
			continue
		}
		for i := 0; i < 40; i++ {
			v := reflect.New(typ)
			fill(r, v.Elem(), 0)
			gen, err := Encode(v.Interface())
			if err != nil {
				t.Fatalf("%s: generated encoding: %v", typ.Name(), err)
			}
			w := reflect.New(tw)
			copyFields(w.Elem(), v.Elem())
			refl, err := Encode(w.Interface())
			if err != nil {
				t.Fatalf("%s: reflection encoding: %v", typ.Name(), err)
			}
			if a, b := generic(t, gen), generic(t, refl); !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: the generated encoding differs from reflection's (regenerate: make generate)\ngenerated:  %v\nreflection: %v", typ.Name(), a, b)
			}
			// Decoded both ways, the values encode alike.
			back, backTwin := reflect.New(typ), reflect.New(tw)
			if err := Decode(refl, back.Interface()); err != nil {
				t.Fatalf("%s: generated decoding: %v", typ.Name(), err)
			}
			if err := Decode(refl, backTwin.Interface()); err != nil {
				t.Fatalf("%s: reflection decoding: %v", typ.Name(), err)
			}
			again, err := Encode(back.Interface())
			if err != nil {
				t.Fatal(err)
			}
			againTwin, err := Encode(backTwin.Interface())
			if err != nil {
				t.Fatal(err)
			}
			if a, b := generic(t, again), generic(t, againTwin); !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: decoded through the generated code, it differs from reflection's decoding\ngenerated:  %v\nreflection: %v", typ.Name(), a, b)
			}
			checked++
		}
	}
	t.Logf("%d values checked; types embedding a field, not compared: %s", checked, strings.Join(skipped, ", "))
	if checked < 1000 {
		t.Fatalf("only %d values checked", checked)
	}
}
