package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
)

// TestClusterExamples parses examples/cluster/*.hcl and checks what each
// file means once merged onto the defaults: the three servers form one
// cluster (each retry-joins the other two), and each client knows all three,
// names its own zone in its meta and enables raw_exec.
func TestClusterExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/cluster/*.hcl")
	if err != nil || len(files) != 6 {
		t.Fatalf("examples: %v %v", files, err)
	}
	got := map[string]*Config{}
	for _, f := range files {
		c, warns, err := Load(Default(), f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		w, err := c.Check()
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
		for _, x := range append(warns, w...) {
			t.Errorf("%s: unexpected warning %s", f, x)
		}
		got[filepath.Base(f)] = c
	}
	servers := []string{"127.0.0.1:4646", "127.0.0.1:4656", "127.0.0.1:4666"}
	for i := 1; i <= 3; i++ {
		c := got[fmt.Sprintf("server%d.hcl", i)]
		if c == nil {
			t.Fatalf("server%d.hcl missing", i)
		}
		http := fmt.Sprintf("127.0.0.1:%d", 4636+10*i)
		raft := fmt.Sprintf("127.0.0.1:%d", 4637+10*i)
		var others []string
		for _, s := range servers {
			if s != http {
				others = append(others, s)
			}
		}
		if c.HTTPAddr() != http || c.RaftAddr() != raft || c.AdvertiseRaft() != raft {
			t.Errorf("server%d listens on %s / %s", i, c.HTTPAddr(), c.RaftAddr())
		}
		if !c.Server.Enabled || c.Client.Enabled || c.Server.BootstrapExpect != 3 || !reflect.DeepEqual(c.Server.RetryJoin, others) {
			t.Errorf("server%d: %+v", i, c.Server)
		}
		if c.NodeName() != fmt.Sprintf("server%d", i) || c.DataDir != fmt.Sprintf("/tmp/drover-cluster/server%d", i) {
			t.Errorf("server%d: name %q data_dir %q", i, c.Name, c.DataDir)
		}
	}
	for i, zone := range []string{"a", "b", "c"} {
		name := fmt.Sprintf("client%d", i+1)
		cl := got[name+".hcl"]
		if cl == nil {
			t.Fatalf("%s.hcl missing", name)
		}
		http := fmt.Sprintf("127.0.0.1:%d", 4676+10*i)
		if cl.Server.Enabled || !cl.Client.Enabled || !reflect.DeepEqual(cl.Client.Servers, servers) ||
			cl.Client.Meta["zone"] != zone || cl.DataDir != "/tmp/drover-cluster/"+name ||
			cl.NodeName() != name || cl.HTTPAddr() != http {
			t.Errorf("%s: %+v name %q data_dir %q http %s", name, cl.Client, cl.NodeName(), cl.DataDir, cl.HTTPAddr())
		}
		// The example jobs run raw_exec, which is off unless enabled.
		if !cl.RawExecEnabled() {
			t.Errorf("%s does not enable raw_exec", name)
		}
	}
}
