package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRaftListPeersPrintsNomadColumns(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/operator/raft/configuration" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"Servers":[
		 {"ID":"id-1","Node":"s1","Address":"127.0.0.1:4647","Leader":true,"Voter":true,"RaftProtocol":"3"},
		 {"ID":"id-2","Node":"s2","Address":"127.0.0.2:4647","Leader":false,"Voter":true,"RaftProtocol":"3"}],"Index":7}`)
	}))
	defer srv.Close()

	code, out, errOut := runCLI(t, "", "operator", "raft", "list-peers", "-address", srv.URL)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("output:\n%s", out)
	}
	for i, want := range [][]string{
		{"Node", "ID", "Address", "State", "Voter", "RaftProtocol", "LastIndex", "Health"},
		{"s1", "id-1", "127.0.0.1:4647", "leader", "true", "3", "-", "-"},
		{"s2", "id-2", "127.0.0.2:4647", "follower", "true", "3", "-", "-"},
	} {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("line %d = %q, want %q", i, got, want)
		}
	}
}

func TestRaftListPeersUsesDroverAddr(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "No cluster leader", http.StatusInternalServerError)
	}))
	defer srv.Close()
	t.Setenv("DROVER_ADDR", srv.URL)
	t.Setenv("NOMAD_ADDR", "http://127.0.0.1:1")
	code, _, errOut := runCLI(t, "", "operator", "raft", "list-peers")
	if code == 0 || !strings.Contains(errOut, "500") || !strings.Contains(errOut, "No cluster leader") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}
