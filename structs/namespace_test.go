package structs

import (
	"strings"
	"testing"
)

// TestNamespaceValidate: Nomad's rules and words, several problems listed
// as Nomad's multierror lists them.
func TestNamespaceValidate(t *testing.T) {
	for _, c := range []struct {
		ns   Namespace
		want string
	}{
		{Namespace{Name: "dev"}, ""},
		{Namespace{Name: "dev", NodePoolConfiguration: &NamespaceNodePoolConfiguration{Default: "gpu_1", Allowed: []string{"gpu-*"}}}, ""},
		{Namespace{Name: "*"}, `1 error occurred:` + "\n\t" + `* invalid name "*". Must match regex ^[a-zA-Z0-9-]{1,128}$`},
		{Namespace{Name: strings.Repeat("a", 129)}, "Must match regex"},
		{Namespace{Name: "a b", Description: strings.Repeat("d", 257)}, "2 errors occurred:\n\t* invalid name \"a b\"."},
		{Namespace{Name: "x", Description: strings.Repeat("d", 257)}, "description longer than 256"},
		{Namespace{Name: "x", NodePoolConfiguration: &NamespaceNodePoolConfiguration{Allowed: []string{"a"}, Denied: []string{"b"}}}, "mutually exclusive"},
		{Namespace{Name: "x", NodePoolConfiguration: &NamespaceNodePoolConfiguration{Default: "a b"}}, `invalid node pool "a b"`},
		{Namespace{Name: "x", VaultConfiguration: &NamespaceVaultConfiguration{Allowed: []string{"a"}, Denied: []string{"b"}}}, "invalid vault configuration"},
	} {
		err := c.ns.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%.20s: %v", c.ns.Name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%.20s: %v, want %q", c.ns.Name, err, c.want)
		}
	}
}

// TestNamespaceHash: the hash covers what a user sets, not the indexes,
// and does not depend on the order of the meta keys.
func TestNamespaceHash(t *testing.T) {
	a := &Namespace{Name: "dev", Meta: map[string]string{"a": "1", "b": "2", "c": "3"}}
	b := a.Copy()
	b.CreateIndex, b.ModifyIndex = 7, 9
	if ha, hb := string(a.SetHash()), string(b.SetHash()); ha != hb || len(ha) != 32 {
		t.Fatalf("same fields, different hashes")
	}
	for _, change := range []func(n *Namespace){
		func(n *Namespace) { n.Description = "x" },
		func(n *Namespace) { n.Meta["a"] = "x" },
		func(n *Namespace) { n.Capabilities = &NamespaceCapabilities{DisabledTaskDrivers: []string{"docker"}} },
		func(n *Namespace) { n.NodePoolConfiguration = &NamespaceNodePoolConfiguration{Default: "gpu"} },
		func(n *Namespace) { n.ConsulConfiguration = &NamespaceConsulConfiguration{Default: "c"} },
	} {
		c := a.Copy()
		change(c)
		if string(c.SetHash()) == string(a.Hash) {
			t.Errorf("a change left the hash as it was: %+v", c)
		}
	}
	c := a.Copy()
	c.Meta["a"] = "changed"
	if a.Meta["a"] != "1" {
		t.Fatal("Copy shares Meta")
	}
}

// TestNamespaceCapabilities: Nomad's rule for drivers and network modes,
// and its words.
func TestNamespaceCapabilities(t *testing.T) {
	job := func(drivers []string, modes ...string) *Job {
		tg := &TaskGroup{Name: "g"}
		for _, d := range drivers {
			tg.Tasks = append(tg.Tasks, &Task{Name: d, Driver: d})
		}
		for _, m := range modes {
			tg.Networks = append(tg.Networks, &NetworkResource{Mode: m})
		}
		return &Job{ID: "web", TaskGroups: []*TaskGroup{tg}}
	}
	ns := &Namespace{Name: "dev", Capabilities: &NamespaceCapabilities{
		EnabledTaskDrivers: []string{"exec", "docker"}, DisabledTaskDrivers: []string{"docker"},
		DisabledNetworkModes: []string{"host"},
	}}
	for _, c := range []struct {
		job  *Job
		want string
	}{
		{job([]string{"exec"}, "bridge"), ""},
		{job([]string{"raw_exec"}), `used task driver "raw_exec" is not allowed in namespace "dev"`},
		{job([]string{"docker", "raw_exec"}), `used task drivers ["docker" "raw_exec"] are not allowed in namespace "dev"`},
		{job([]string{"exec"}, ""), `used group network mode "host" is not allowed in namespace "dev"`},
		{job([]string{"exec"}, "host", "none"), `used group network mode "host" is not allowed`},
	} {
		err := ns.CheckCapabilities(c.job)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v, want %q", c.job.TaskGroups[0].Tasks[0].Driver, err, c.want)
		}
	}
	if err := (&Namespace{Name: "open"}).CheckCapabilities(job([]string{"anything"}, "bridge")); err != nil {
		t.Errorf("no capabilities: %v", err)
	}
}
