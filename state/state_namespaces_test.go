package state

import (
	"errors"
	"strings"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func upsertNamespaces(s *Store, index uint64, ns ...*structs.Namespace) error {
	return s.update(index, func(t *WriteTxn) error {
		return s.UpsertNamespacesTxn(t, &structs.NamespaceUpsertRequest{Namespaces: ns})
	})
}

func deleteNamespaces(s *Store, index uint64, names ...string) error {
	return s.update(index, func(t *WriteTxn) error {
		return s.DeleteNamespacesTxn(t, &structs.NamespaceDeleteRequest{Namespaces: names})
	})
}

// TestNamespacesStored: a new store holds "default" at index 1; an
// upsert stores the namespace with its hash and keeps CreateIndex on
// replace; deletes are refused for default, an absent namespace and one
// with a live job or a variable, and none of a refused entry applies.
func TestNamespacesStored(t *testing.T) {
	s := newStore(t)
	def := get[*structs.Namespace](t)(s.Snapshot().NamespaceByName("default"))
	if def == nil || def.Description != structs.DefaultNamespaceDescription || def.CreateIndex != 1 || len(def.Hash) != 32 {
		t.Fatalf("default: %+v", def)
	}
	dev := &structs.Namespace{Name: "dev", Description: "d", Meta: map[string]string{"a": "b"},
		Capabilities: &structs.NamespaceCapabilities{DisabledTaskDrivers: []string{"docker"}}}
	must(t, upsertNamespaces(s, 5, dev, &structs.Namespace{Name: "qa"}))
	got := get[*structs.Namespace](t)(s.Snapshot().NamespaceByName("dev"))
	if got.CreateIndex != 5 || got.ModifyIndex != 5 || got.Meta["a"] != "b" || len(got.Hash) != 32 || got == dev {
		t.Fatalf("dev: %+v", got)
	}
	if idx := get[uint64](t)(s.Snapshot().Index(TableNamespaces)); idx != 5 {
		t.Errorf("index %d", idx)
	}
	dev2 := dev.Copy()
	dev2.Description = "changed"
	must(t, upsertNamespaces(s, 6, dev2))
	got2 := get[*structs.Namespace](t)(s.Snapshot().NamespaceByName("dev"))
	if got2.CreateIndex != 5 || got2.ModifyIndex != 6 || string(got2.Hash) == string(got.Hash) {
		t.Errorf("replaced: %+v (was %+v)", got2, got)
	}
	if err := upsertNamespaces(s, 7, &structs.Namespace{Name: "a b"}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `invalid name "a b"`) {
		t.Errorf("invalid: %v", err)
	}
	if l := get[[]*structs.Namespace](t)(s.Snapshot().NamespacesByPrefix("d")); len(l) != 2 || l[0].Name != "default" || l[1].Name != "dev" {
		t.Errorf("prefix d: %v", l)
	}

	job := statetest.Job("web", 1)
	job.Namespace = "dev"
	registerJob(t, s, 8, job)
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"default"}, "default namespace can not be deleted"},
		{[]string{"nope"}, "namespace not found"},
		{[]string{"qa", "dev"}, `namespace "dev" contains at least one non-terminal job "web"`},
	} {
		if err := deleteNamespaces(s, 10, c.names...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("delete %v: %v, want %q", c.names, err, c.want)
		}
	}
	if ns := get[*structs.Namespace](t)(s.Snapshot().NamespaceByName("qa")); ns == nil {
		t.Fatal("a refused delete deleted qa")
	}
	must(t, deleteNamespaces(s, 11, "qa"))
	if ns := get[*structs.Namespace](t)(s.Snapshot().NamespaceByName("qa")); ns != nil {
		t.Fatal("qa not deleted")
	}
}

// TestNamespaceOfAnEntryWithoutOne: a job or a variable applied in a
// namespace without a row (an entry of a build that kept none) creates
// the row at its index, and a variable then keeps its namespace from
// being deleted.
func TestNamespaceOfAnEntryWithoutOne(t *testing.T) {
	s := newStore(t)
	job := statetest.Job("web", 1)
	job.Namespace = "old"
	registerJob(t, s, 3, job)
	if ns := get[*structs.Namespace](t)(s.Snapshot().NamespaceByName("old")); ns == nil || ns.CreateIndex != 3 {
		t.Fatalf("job's namespace: %+v", ns)
	}
	upsertKey(t, s, 4, testRootKey("k1", structs.RootKeyStateActive), false)
	applyVar(t, s, 5, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("vars", "a", "k1")})
	if ns := get[*structs.Namespace](t)(s.Snapshot().NamespaceByName("vars")); ns == nil || ns.CreateIndex != 5 {
		t.Fatalf("variable's namespace: %+v", ns)
	}
	if err := deleteNamespaces(s, 6, "vars"); err == nil || !strings.Contains(err.Error(), `namespace "vars" contains at least one variable`) {
		t.Errorf("delete vars: %v", err)
	}
}

// TestRestoreDerivesNamespaces: a snapshot without namespace rows (as a
// build before them wrote) is restored with default and a row for every
// namespace its jobs and variables name, each at its first object's
// index; a snapshot with rows is restored as it is.
func TestRestoreDerivesNamespaces(t *testing.T) {
	src := newStore(t)
	for i, ns := range []string{"a", "b", "a"} {
		job := statetest.Job("j"+string(rune('0'+i)), 1)
		job.Namespace = ns
		registerJob(t, src, uint64(10+i), job)
	}
	upsertKey(t, src, 20, testRootKey("k1", structs.RootKeyStateActive), false)
	applyVar(t, src, 21, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("c", "p", "k1")})

	old := newStore(t)
	r := old.Restorer()
	snap := src.Snapshot()
	for _, table := range Tables {
		if table == TableNamespaces {
			continue // as a build before them wrote it
		}
		must(t, snap.Each(table, func(obj any) error {
			if e, ok := obj.(*IndexEntry); ok && e.Key == TableNamespaces {
				return nil
			}
			return r.Insert(table, obj)
		}))
	}
	r.Commit()
	all := get[[]*structs.Namespace](t)(old.Snapshot().Namespaces())
	want := map[string]uint64{"a": 10, "b": 11, "c": 21, "default": 1}
	if len(all) != len(want) {
		t.Fatalf("restored namespaces %v", all)
	}
	for _, n := range all {
		if want[n.Name] != n.CreateIndex || len(n.Hash) == 0 {
			t.Errorf("restored %s at %d, want %d", n.Name, n.CreateIndex, want[n.Name])
		}
	}

	// With rows: only those. A namespace deleted while a dead job is in
	// it stays deleted, as on a server that applied the log.
	fresh := newStore(t)
	must(t, upsertNamespaces(fresh, 30, &structs.Namespace{Name: "gone"}))
	dead := statetest.Job("old", 1)
	dead.Namespace = "gone"
	_, err := fresh.RegisterJob(31, &structs.JobRegisterRequest{Job: dead, SubmitTime: 31})
	must(t, err)
	_, err = fresh.DeregisterJob(32, &structs.JobDeregisterRequest{Namespace: "gone", JobID: "old", SubmitTime: 32})
	must(t, err)
	if j := get[*structs.Job](t)(fresh.Snapshot().JobByID("gone", "old")); j == nil || j.Status != structs.JobStatusDead {
		t.Fatalf("stopped job: %+v", j)
	}
	must(t, deleteNamespaces(fresh, 33, "gone"))
	same := restoredCopy(t, fresh)
	if a, b := dumpOf(t, fresh), dumpOf(t, same); a != b {
		t.Errorf("restored copy differs:\n%s\n%s", a, b)
	}
	if ns := get[*structs.Namespace](t)(same.Snapshot().NamespaceByName("gone")); ns != nil {
		t.Errorf("a deleted namespace came back with the restore: %+v", ns)
	}
}

func dumpOf(t *testing.T, s *Store) string {
	t.Helper()
	return string(get[[]byte](t)(s.Snapshot().Dump()))
}

// TestJobSubmissionsKeptPerVersion: a registration's submission is kept
// for the version it leaves current, once; the job's tracked versions
// bound how many are kept; a purge deletes them.
func TestJobSubmissionsKeptPerVersion(t *testing.T) {
	s := newStore(t)
	s.SetJobTrackedVersions(2)
	reg := func(index uint64, count int, src string) {
		t.Helper()
		job := statetest.Job("web", count)
		_, err := s.RegisterJob(index, &structs.JobRegisterRequest{Job: job, SubmitTime: int64(index),
			Submission: &structs.JobSubmission{Source: src, Format: "hcl2", VariableFlags: map[string]string{"x": "1"}}})
		must(t, err)
	}
	source := func(v uint64) string {
		sub := get[*structs.JobSubmission](t)(s.Snapshot().JobSubmission("default", "web", v))
		if sub == nil {
			return ""
		}
		if sub.Namespace != "default" || sub.JobID != "web" || sub.Version != v || sub.VariableFlags["x"] != "1" {
			t.Errorf("submission %d: %+v", v, sub)
		}
		return sub.Source
	}
	reg(5, 1, "v0")
	reg(6, 1, "v0 again") // identical job: version 0 keeps its source
	if got := source(0); got != "v0" {
		t.Errorf("v0: %q", got)
	}
	reg(7, 2, "v1")
	reg(8, 3, "v2")
	if a, b, c := source(0), source(1), source(2); a != "" || b != "v1" || c != "v2" {
		t.Errorf("after 3 versions with 2 tracked: %q %q %q", a, b, c)
	}
	other := statetest.Job("web2", 1) // a longer ID with the same prefix
	registerJob(t, s, 9, other)
	_, err := s.DeregisterJob(10, &structs.JobDeregisterRequest{Namespace: "default", JobID: "web", Purge: true})
	must(t, err)
	if subs := get[[]*structs.JobSubmission](t)(s.Snapshot().JobSubmissions("default", "web")); len(subs) != 0 {
		t.Errorf("after purge: %v", subs)
	}
}
