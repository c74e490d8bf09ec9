package main

import (
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

func TestUIOpensThePageOfWhatAnIDNames(t *testing.T) {
	b, addr, _ := newCLIServer(t)
	b.must(t, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: cliNode()})
	job := b.registerWeb(t)
	b.placeCanary(t, job, depA, "alloc-a")
	base := addr

	wantCLI(t, 0, []string{"URL for web UI: " + base + "/ui/jobs\n"}, "ui", "-show-url", "-address", addr)
	wantCLI(t, 0, []string{"URL for web UI: " + base + "/ui/jobs/web\n"}, "ui", "-show-url", "-address", addr, "web")
	wantCLI(t, 0, []string{"URL for web UI: " + base + "/ui/deployments/" + depA + "\n"}, "ui", "-show-url", "-address", addr, "0b23")
	wantCLI(t, 0, []string{"URL for web UI: " + base + "/ui/allocations/alloc-a\n"}, "ui", "-show-url", "-address", addr, "alloc-a")
	wantCLI(t, 0, []string{"URL for web UI: " + base + "/ui/nodes\n"}, "ui", "-show-url", "-address", addr, "n1")
	wantCLI(t, 1, []string{`No matches found for "zzz"`}, "ui", "-show-url", "-address", addr, "zzz")

	var opened []string
	old := openBrowser
	openBrowser = func(u string) error { opened = append(opened, u); return nil }
	t.Cleanup(func() { openBrowser = old })
	wantCLI(t, 0, []string{`Opening URL "` + base + `/ui/jobs/web"`}, "ui", "-address", addr, "web")
	if strings.Join(opened, " ") != base+"/ui/jobs/web" {
		t.Fatalf("opened %q", opened)
	}

	b.placeCanary(t, job, depB, "alloc-b")
	wantCLI(t, 1, []string{"Prefix matched multiple objects", "Deployments", depA, depB}, "ui", "-show-url", "-address", addr, "0b23")
}
