package e2e

import (
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// TestUIMultiregionJob: the job page of a multi-region job shows each
// region's deployment of the version, in the order the regions roll, read
// from that region: while east rolls, west's waits pending; at the end both
// are successful, shown without a reload.
func TestUIMultiregionJob(t *testing.T) {
	chromiumPath(t)
	east, west := startFederatedPair(t)
	ec, wc := east.client(), west.client()
	spec := rolloutSpec{ID: "ui-mr", Count: 1, Update: mrUpdate, Version: "1"}
	stopJobProcs(t, ec, spec.ID)
	stopJobProcs(t, wc, spec.ID)
	registerMultiregion(t, east, west, spec, structs.MultiregionOnFailureFailAll, 0)

	b := newBrowser(t, "http://"+east.httpAddr, 2*time.Minute)
	b.open("/ui/jobs/" + spec.ID)
	js[bool](b, "window.sameDocument = true")
	b.waitFor("a row per region", 10*time.Second, func() bool {
		return b.visible("#job-regions-section") && js[int](b, `document.querySelectorAll("#job-regions tr").length`) == 2
	})
	if got := js[string](b, `[...document.querySelectorAll("#job-regions tr")].map((r) => r.dataset.region).join(",")`); got != "east,west" {
		t.Fatalf("regions shown in the order %q, want east,west", got)
	}
	// West's status as the page shows it, until both regions are done:
	// it may pass through pending too quickly for the page's reads.
	westStatus := `#job-regions [data-region="west"] [data-k="status"]`
	var seen []string
	b.waitFor("both regions successful", 60*time.Second, func() bool {
		if s := b.text(westStatus); len(seen) == 0 || seen[len(seen)-1] != s {
			seen = append(seen, s)
		}
		return b.text(`#job-regions [data-region="east"] [data-k="status"]`) == structs.DeploymentStatusSuccessful &&
			b.text(westStatus) == structs.DeploymentStatusSuccessful
	})
	t.Logf("west's statuses shown: %q", seen)
	if !js[bool](b, "window.sameDocument === true") {
		t.Error("the job page reloaded itself")
	}
}
