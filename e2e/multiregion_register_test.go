package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// multiregionJobSrc is a multi-region job of the mock driver: one
// allocation in east (datacenter dc1, the dev agents'), two in west (the
// job's datacenters), each region's meta merged over the job's.
const multiregionJobSrc = `job "%s" {
  datacenters = ["*"]
  meta {
    owner = "%s"
  }
  multiregion {
    strategy {
      max_parallel = 1
    }
    region "%s" {
      count       = 1
      datacenters = ["dc1"]
      meta {
        tier = "first"
      }
    }
    region "west" {
      count = 2
    }
  }
  group "g" {
    task "t" {
      driver = "mock"
      config {}
    }
  }
}
`

// mrMatch reports whether the regular expression re matches s.
func mrMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// regionJob reads the job region holds through c (nil: none).
func regionJob(t *testing.T, c *apiclient.Client, region, id string) (*structs.Job, error) {
	var j *structs.Job
	_, err := c.Get(ctx(t), "/v1/job/"+id, &apiclient.QueryOptions{Params: map[string]string{"region": region}}, &j)
	if apiclient.IsNotFound(err) {
		return nil, nil
	}
	return j, err
}

// Two regions, a dev agent each, federated with `drover server join`
// (issue 47, the registration of multi-region jobs):
//
//   - a job with region "east" {count = 1} and region "west" {count = 2},
//     run through east, is registered in both at one version — one past the
//     version west held of a job of the same ID — each copy with its
//     region, count, datacenters and meta, and runs there;
//   - run again unchanged, no region gets a new version; job plan shows
//     both regions in order, job status each region's copy;
//   - a block naming a region the federation does not know is a 400 naming
//     it, and so is a copy a region refuses (its node pool does not exist
//     there): no region stores anything;
//   - job stop without -global stops east's copy only; job stop -global
//     stops both;
//   - with west's agent gone, a run is a 503 naming west within the
//     forward hold, and east stores nothing.
func TestMultiregionJobRegisteredInEveryRegion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agent processes")
	}
	east, west := startFederatedPair(t)
	ec, wc := east.client(), west.client()
	dir := t.TempDir()
	file := func(name, id, owner, first string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(fmt.Sprintf(multiregionJobSrc, id, owner, first)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// West holds a job of the same ID at versions 0 and 1 already.
	plain := parseJob(t, "testdata/echo.hcl")
	plain.ID, plain.Name, plain.Region = "mr", "mr", "west"
	plain.TaskGroups[0].Tasks[0].Driver, plain.TaskGroups[0].Tasks[0].Config = "mock", map[string]any{}
	registerJob(t, ec, plain)
	plain.Meta = map[string]string{"v": "1"}
	registerJob(t, ec, plain)

	// Run through east: both regions at version 2.
	out, err := east.cli(t, "job", "run", file("mr.hcl", "mr", "ops", "east"))
	if err != nil || !strings.Contains(out, "Job registration successful") || !strings.Contains(out, "Evaluation ID:") {
		t.Fatalf("job run: %v\n%s", err, out)
	}
	want := map[string]struct {
		count int
		dcs   []string
		meta  map[string]string
	}{
		"east": {1, []string{"dc1"}, map[string]string{"owner": "ops", "tier": "first"}},
		"west": {2, []string{"*"}, map[string]string{"owner": "ops"}},
	}
	for region, w := range want {
		j, err := regionJob(t, ec, region, "mr")
		if err != nil || j == nil {
			t.Fatalf("%s: %v %v", region, j, err)
		}
		if j.Region != region || j.Version != 2 || j.TaskGroups[0].Count != w.count || !slices.Equal(j.Datacenters, w.dcs) ||
			fmt.Sprint(j.Meta) != fmt.Sprint(w.meta) || !j.IsMultiregion() || len(j.Multiregion.Regions) != 2 || j.Multiregion.Strategy.MaxParallel != 1 {
			t.Fatalf("%s holds %s", region, jsonString(j))
		}
	}
	for region, c := range map[string]*apiclient.Client{"east": ec, "west": wc} {
		n := want[region].count
		eventually(t, 30*time.Second, fmt.Sprintf("%d allocations running in %s", n, region), func() error {
			allocs, err := jobAllocs(t, c, "mr")
			if err != nil {
				return err
			}
			if run := runningAllocs(allocs, 2); len(run) != n {
				return fmt.Errorf("%d running at version 2: %s", len(run), jsonString(allocs))
			}
			return nil
		})
	}

	// Unchanged: no new version anywhere.
	if out, err := east.cli(t, "job", "run", file("mr.hcl", "mr", "ops", "east")); err != nil {
		t.Fatalf("job run again: %v\n%s", err, out)
	}
	for _, region := range []string{"east", "west"} {
		if j, err := regionJob(t, ec, region, "mr"); err != nil || j == nil || j.Version != 2 {
			t.Fatalf("%s after an identical run: %v %v", region, j, err)
		}
	}
	out, err = east.cli(t, "job", "plan", file("mr.hcl", "mr", "ops", "east"))
	if i, j := strings.Index(out, `Region: "east"`), strings.Index(out, `Region: "west"`); i < 0 || j < i ||
		!strings.Contains(out, "Regions, in the order they roll (1 at a time): east, west") {
		t.Fatalf("job plan: %v\n%s", err, out)
	}
	out, err = east.cli(t, "job", "status", "mr")
	if err != nil || !strings.Contains(out, "Multiregion Deployment") || !mrMatch(`(?m)^east\s+2\s`, out) || !mrMatch(`(?m)^west\s+2\s`, out) {
		t.Fatalf("job status: %v\n%s", err, out)
	}

	// A region nobody knows: a 400 naming it, nothing stored anywhere.
	out, err = east.cli(t, "job", "run", file("bad.hcl", "mr-bad", "ops", "north"))
	if err == nil || !strings.Contains(out, `"north"`) || !strings.Contains(out, "No path to region") {
		t.Fatalf("job run naming north: %v\n%s", err, out)
	}
	for _, region := range []string{"east", "west"} {
		if j, err := regionJob(t, ec, region, "mr-bad"); err != nil || j != nil {
			t.Fatalf("%s holds the refused job: %v %v", region, j, err)
		}
	}
	code, body, err := rawGet(t, east, "/v1/job/mr-bad?region=west", "")
	if err != nil || code != http.StatusNotFound {
		t.Fatalf("west: %d %v %s", code, err, body)
	}

	// A copy west refuses (its node pool does not exist there): a 400
	// naming west, found before east writes anything.
	poolFile := filepath.Join(dir, "pool.hcl")
	src := strings.Replace(fmt.Sprintf(multiregionJobSrc, "mr-pool", "ops", "east"), "count = 2", "count = 2\n      node_pool = \"nope\"", 1)
	if err := os.WriteFile(poolFile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = east.cli(t, "job", "run", poolFile)
	if err == nil || !strings.Contains(out, "400") || !strings.Contains(out, `region "west"`) || !strings.Contains(out, "nope") {
		t.Fatalf("job run with west's pool missing: %v\n%s", err, out)
	}
	for _, region := range []string{"east", "west"} {
		if j, err := regionJob(t, ec, region, "mr-pool"); err != nil || j != nil {
			t.Fatalf("%s holds the refused job: %v %v", region, j, err)
		}
	}

	// job stop: this region only; -global: every region.
	if out, err := east.cli(t, "job", "stop", "-detach", "mr"); err != nil {
		t.Fatalf("job stop: %v\n%s", err, out)
	}
	if j, _ := regionJob(t, ec, "east", "mr"); j == nil || !j.Stop {
		t.Fatalf("east not stopped: %s", jsonString(j))
	}
	if j, _ := regionJob(t, ec, "west", "mr"); j == nil || j.Stop {
		t.Fatalf("west stopped without -global: %s", jsonString(j))
	}
	if out, err := east.cli(t, "job", "stop", "-detach", "-global", "mr"); err != nil {
		t.Fatalf("job stop -global: %v\n%s", err, out)
	}
	for _, region := range []string{"east", "west"} {
		if j, _ := regionJob(t, ec, region, "mr"); j == nil || !j.Stop {
			t.Fatalf("%s not stopped by -global: %s", region, jsonString(j))
		}
	}
	eventually(t, 30*time.Second, "west's allocations stopped", func() error {
		allocs, err := jobAllocs(t, wc, "mr")
		if err != nil {
			return err
		}
		for _, a := range allocs {
			if a.DesiredStatus == structs.AllocDesiredStatusRun {
				return fmt.Errorf("%s still desired running", a.ID)
			}
		}
		return nil
	})

	// West gone: a 503 naming it within the hold, and east stores nothing.
	west.interrupt()
	start := time.Now()
	out, err = east.cli(t, "job", "run", file("gone.hcl", "mr-gone", "ops", "east"))
	if err == nil || !strings.Contains(out, "503") || !strings.Contains(out, `region "west"`) || !strings.Contains(out, "nothing was registered") {
		t.Fatalf("job run with west gone: %v\n%s", err, out)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("the refusal took %s", took)
	}
	if j, err := regionJob(t, ec, "east", "mr-gone"); err != nil || j != nil {
		t.Fatalf("east holds the job refused: %v %v", j, err)
	}
}
