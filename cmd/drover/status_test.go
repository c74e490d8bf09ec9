package main

import (
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

func TestStatusFindsWhatAnIDNames(t *testing.T) {
	b, addr, _ := newCLIServer(t)
	b.must(t, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: cliNode()})
	job := b.registerWeb(t)
	b.placeCanary(t, job, depA, "alloc-a")

	wantCLI(t, 0, []string{"ID", "Type", "web", "service"}, "status", "-address", addr)
	wantCLI(t, 0, []string{"ID            = web", "Allocations"}, "status", "-address", addr, "web")
	wantCLI(t, 0, []string{"ID          = 0b23b149", "requires manual promotion"}, "status", "-address", addr, "0b23")
	wantCLI(t, 0, []string{"ID                  = alloc-a"}, "status", "-address", addr, "alloc-a")
	wantCLI(t, 0, []string{"DC                 = dc1", "Drivers            = raw_exec"}, "status", "-address", addr, "n1")
	wantCLI(t, 1, []string{`No matches found for "zzz"`}, "status", "-address", addr, "zzz")

	b.placeCanary(t, job, depB, "alloc-b")
	wantCLI(t, 1, []string{"Prefix matched multiple objects", "Deployments", depA, depB}, "status", "-address", addr, "0b23")
}
